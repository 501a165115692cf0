"""The fold's durable state: a restored fold goes on exactly as the one that never stopped."""

from __future__ import annotations

import random

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schemas.codec import encode
from services.settlement import capture, rebuild, state
from services.settlement.fold import Fold
from services.settlement.state import StateError
from services.simulation.streams import Profile, generate, interleave
from tests.unit.builders import bet, round_event, rounds, run, sicbo_round

SEEDS = st.integers(min_value=0, max_value=2**32)


def _apply(log: dict[bytes, bytes], entries: list[state.Entry]) -> None:
    """What a compacted topic keeps of the entries written: the last value of each live key."""
    for key, value in entries:
        if value is None:
            log.pop(key, None)
        else:
            log[key] = value


def _batches(
    messages: list[tuple[str, bytes]], rng: random.Random
) -> list[list[tuple[str, bytes]]]:
    batches: list[list[tuple[str, bytes]]] = []
    at = 0
    while at < len(messages):
        size = rng.randint(1, 12)
        batches.append(messages[at : at + size])
        at += size
    return batches


def _feed(fold: Fold, batch: list[tuple[str, bytes]]) -> list[bytes]:
    return [encode(record) for topic, raw in batch for record in fold.feed(topic, raw)]


@settings(max_examples=80)
@given(seed=SEEDS, mix=SEEDS, horizon=st.integers(min_value=1, max_value=4))
def test_restoring_after_any_batch_gives_the_records_of_the_uninterrupted_fold(
    seed: int, mix: int, horizon: int
) -> None:
    rng = random.Random(mix)
    profile = Profile(correct=0.3, void=0.1)
    messages = interleave(generate(seed, tables=3, rounds=9, profile=profile), rng)
    batches = _batches(messages, rng)
    cut = rng.randint(0, len(batches))

    whole = Fold(horizon=horizon)
    expected = [_feed(whole, batch) for batch in batches]

    log: dict[bytes, bytes] = {}
    first = Fold(horizon=horizon, journal=True)
    layout = capture.Layout()
    for n, batch in enumerate(batches[:cut]):
        assert _feed(first, batch) == expected[n]
        _apply(log, layout.changes(first))
    restored = rebuild.fold_of(log, horizon=horizon)
    assert restored.pending == first.pending
    layout = capture.Layout.of(log)
    for n, batch in enumerate(batches[cut:], start=cut):
        assert _feed(restored, batch) == expected[n]
        _apply(log, layout.changes(restored))
    assert restored.pending == whole.pending
    assert sorted(restored.tables) == sorted(whole.tables)
    for table_id in whole.tables:
        assert restored.stats(table_id) == whole.stats(table_id)
    assert sorted(encode(b) for b in restored.waiting()) == sorted(
        encode(b) for b in whole.waiting()
    )
    # the changelog kept is the state itself: restoring it again gives the same bytes
    again = rebuild.fold_of(log, horizon=horizon)
    assert capture.Layout().snapshot(again) == capture.Layout().snapshot(restored)


@settings(max_examples=30)
@given(seed=SEEDS, mix=SEEDS)
def test_the_same_inputs_give_the_same_state_bytes(seed: int, mix: int) -> None:
    messages = interleave(generate(seed, tables=2, rounds=6), random.Random(mix))
    logs = []
    for _ in range(2):
        fold = Fold(horizon=2, journal=True)
        layout = capture.Layout()
        written: list[state.Entry] = []
        for topic, raw in messages:
            fold.feed(topic, raw)
            written.extend(layout.changes(fold))
        logs.append(written)
    assert logs[0] == logs[1]


def _big_round(fold: Fold, bets: int) -> None:
    run(rounds(round_event("opened", game="sicbo")), fold)
    run([("bets", bet(n, bet_id=f"B{n}")) for n in range(1, bets + 1)], fold)


def test_a_bet_added_to_a_large_round_writes_one_small_segment_not_the_round() -> None:
    fold = Fold(journal=True)
    _big_round(fold, 2000)
    layout = capture.Layout()
    everything = layout.changes(fold)
    assert sum(len(v or b"") for _, v in everything) > 2000 * 100
    run([("bets", bet(2001, bet_id="B2001"))], fold)
    one = layout.changes(fold)
    assert [msgspec.json.decode(key)[0] for key, _ in one] == ["bets", "round"]
    assert sum(len(key) + len(value or b"") for key, value in one) < 1500


def test_a_round_with_many_bets_is_kept_in_segments_of_bounded_size() -> None:
    fold = Fold(journal=True)
    _big_round(fold, 6000)
    entries = capture.Layout().changes(fold)
    segments = [v for k, v in entries if msgspec.json.decode(k)[0] == "bets"]
    assert len(segments) >= 2
    assert all(v is not None and len(v) < state.SEGMENT_BYTES + 2048 for v in segments)
    restored = rebuild.fold_of(dict(e for e in entries if e[1] is not None), horizon=200)  # type: ignore[misc]
    assert restored.pending == 6000
    assert [b.bet_id for b in restored.waiting()] == [f"B{n}" for n in range(1, 6001)]


def test_a_forgotten_round_leaves_tombstones_for_its_round_and_its_bets() -> None:
    """Horizon 1: a decided round goes once a newer one is decided and the bets moved on."""
    fold = Fold(horizon=1, journal=True)
    layout = capture.Layout()
    for n in (1, 2, 3):
        run(rounds(*sicbo_round([1, 2, 3], last_seq=1, round_id=f"R{n}")), fold)
        run([("bets", bet(1, round_id=f"R{n}"))], fold)
    layout.changes(fold)
    run(rounds(*sicbo_round([4, 5, 6], last_seq=1, round_id="R4")), fold)
    run([("bets", bet(1, round_id="R4"))], fold)
    entries = dict(layout.changes(fold))
    # R3 goes once the table's bets reach R4 (R2 went in the batch before, when they reached R3)
    assert entries[state.round_key("T1", "R3")] is None
    assert entries[state.bets_key("T1", "R3", 0)] is None
    assert state.round_key("T1", "R2") not in entries
    assert entries[state.round_key("T1", "R4")] is not None


def _log_of_one_round() -> dict[bytes, bytes]:
    fold = Fold(journal=True)
    _big_round(fold, 3)
    return {key: value for key, value in capture.Layout().changes(fold) if value is not None}


def test_a_state_value_of_an_unknown_version_is_refused() -> None:
    log = _log_of_one_round()
    key = state.round_key("T1", "R1")
    log[key] = log[key].replace(b'"v":1', b'"v":2', 1)
    with pytest.raises(StateError, match="format version 2"):
        rebuild.fold_of(log, horizon=200)


def test_an_unreadable_state_value_is_refused() -> None:
    log = _log_of_one_round()
    log[state.table_key("T1")] = b"\x00garbage"
    with pytest.raises(StateError, match="unreadable state record"):
        rebuild.fold_of(log, horizon=200)


def test_a_round_whose_bets_are_lost_is_refused() -> None:
    log = _log_of_one_round()
    del log[state.bets_key("T1", "R1", 0)]
    with pytest.raises(StateError, match="bets 0 lost"):
        rebuild.fold_of(log, horizon=200)


def test_a_value_under_another_key_is_refused() -> None:
    log = _log_of_one_round()
    log[state.table_key("T2")] = log[state.table_key("T1")]
    with pytest.raises(StateError, match="value of another key"):
        rebuild.fold_of(log, horizon=200)


def test_a_snapshot_restores_the_same_fold_as_its_changelog() -> None:
    fold = Fold(journal=True)
    layout = capture.Layout()
    log: dict[bytes, bytes] = {}
    _big_round(fold, 40)
    _apply(log, layout.changes(fold))
    run(rounds(round_event("betting_closed", last_seq=30)), fold)
    run(rounds(round_event("result", dice=[2, 2, 5])), fold)
    _apply(log, layout.changes(fold))
    whole = capture.Layout().snapshot(fold)
    assert capture.Layout().snapshot(rebuild.fold_of(log, horizon=200)) == whole
    restored = rebuild.fold_of(dict(whole), horizon=200)  # type: ignore[arg-type]
    assert capture.Layout().snapshot(restored) == whole


def _log_of_one_decided_round() -> dict[bytes, bytes]:
    fold = Fold(journal=True)
    _big_round(fold, 3)
    closed = round_event("betting_closed", last_seq=3)
    run(rounds(closed, round_event("result", dice=[1, 2, 3])), fold)
    return {key: value for key, value in capture.Layout().changes(fold) if value is not None}


def _with_bets(log: dict[bytes, bytes], lines: list[bytes]) -> dict[bytes, bytes]:
    """The log with the first bets segment of round R1 holding these lines instead."""
    key = state.bets_key("T1", "R1", 0)
    kept = msgspec.json.decode(log[key], type=state.BetsState)
    changed = msgspec.structs.replace(kept, bets=[msgspec.Raw(line) for line in lines])
    return {**log, key: msgspec.json.encode(changed)}


def test_a_decided_rounds_bets_are_restored_for_repeats_in_reading_order() -> None:
    log = _log_of_one_decided_round()
    restored = rebuild.fold_of(log, horizon=200)
    rnd = restored.tables["T1"].rounds["R1"]
    assert list(rnd.seqs.items()) == [(1, "B1"), (2, "B2"), (3, "B3")]
    assert restored.pending == 0
    assert _feed(restored, [("bets", bet(2, bet_id="B2"))]) == []  # a repeat: nothing again
    (conflict,) = _feed(restored, [("bets", bet(2, bet_id="B2", stake=999))])
    assert b'"reason":"conflicting_duplicate"' in conflict and b"differs in stake" in conflict


def test_a_decided_rounds_bets_segment_holding_a_round_event_is_refused() -> None:
    log = _log_of_one_decided_round()
    segment = msgspec.json.decode(log[state.bets_key("T1", "R1", 0)], type=state.BetsState)
    lines = [bytes(line) for line in segment.bets]
    lines[1] = round_event("opened", game="sicbo")
    with pytest.raises(StateError, match="round 'R1' is unreadable"):
        rebuild.fold_of(_with_bets(log, lines), horizon=200)
    lines[1] = round_event("opened", game="sicbo", bet_id="B2", seq=2)  # shaped like a bet
    with pytest.raises(StateError, match="holds a round event"):
        rebuild.fold_of(_with_bets(log, lines), horizon=200)


def test_a_decided_rounds_unreadable_bet_is_refused() -> None:
    log = _log_of_one_decided_round()
    with pytest.raises(StateError, match="is unreadable"):
        rebuild.fold_of(_with_bets(log, [b'{"type":"bet.placed","seq":1}']), horizon=200)
