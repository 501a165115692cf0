"""A part of the state written whole again (a table, or a round and its bets) replaces every
record of it written before: a restore that reads the state partition from there gets the same
fold as one that reads it all."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from schemas.codec import encode
from services.settlement import capture, rebuild, state
from services.settlement.fold import Fold
from services.simulation.streams import Profile, generate, interleave
from tests.unit.builders import bet, round_event, rounds, run

SEEDS = st.integers(min_value=0, max_value=2**32)


def _live(topic: list[state.Entry], start: int = 0) -> dict[bytes, bytes]:
    """What a compacted topic read from offset `start` gives: the last value of each live key."""
    log: dict[bytes, bytes] = {}
    for key, value in topic[start:]:
        if value is None:
            log.pop(key, None)
        else:
            log[key] = value
    return log


def _restored(topic: list[state.Entry], horizon: int) -> tuple[Fold, int]:
    """The fold a restore builds, reading from the latest position's snapshot offset on."""
    log = _live(topic)
    start = state.read_position(log.pop(state.TASK_KEY)).snapshot
    entries = _live(topic, start)
    entries.pop(state.TASK_KEY, None)
    return rebuild.fold_of(entries, horizon=horizon), start


def _feed(fold: Fold, batch: list[tuple[str, bytes]]) -> list[bytes]:
    return [encode(record) for topic, raw in batch for record in fold.feed(topic, raw)]


@settings(max_examples=60)
@given(seed=SEEDS, mix=SEEDS, horizon=st.integers(min_value=1, max_value=4))
def test_a_restore_from_where_every_part_was_written_again_goes_on_as_the_uninterrupted_fold(
    seed: int, mix: int, horizon: int
) -> None:
    rng = random.Random(mix)
    messages = interleave(generate(seed, tables=3, rounds=9, profile=Profile(correct=0.3)), rng)
    batches = [messages[at : at + rng.randint(1, 12)] for at in range(0, len(messages), 12)]
    cut = rng.randint(1, len(batches))
    whole = Fold(horizon=horizon)
    expected = [_feed(whole, batch) for batch in batches]

    topic: list[state.Entry] = []
    first = Fold(horizon=horizon, journal=True)
    layout = capture.Layout()
    for n, batch in enumerate(batches[:cut]):
        assert _feed(first, batch) == expected[n]
        topic.extend(layout.changes(first))
    start = len(topic)
    again: dict[bytes, bytes | None] = {}
    for table_id in sorted(first.tables):
        for which in [(table_id, None), *((table_id, r) for r in first.tables[table_id].rounds)]:
            again.update(layout.part(first, which) or [])
    topic.extend(sorted(again.items()))
    topic.append(state.position_entry(cut, cut, start, layout.count(first)))
    assert len(_live(topic, start)) == layout.count(first) + 1

    restored, read_from = _restored(topic, horizon)
    assert read_from == start
    everything = _live(topic)
    del everything[state.TASK_KEY]
    assert capture.Layout().snapshot(
        rebuild.fold_of(everything, horizon=horizon)
    ) == capture.Layout().snapshot(restored)
    for n, batch in enumerate(batches[cut:], start=cut):
        assert _feed(restored, batch) == expected[n]
    assert restored.pending == whole.pending
    for table_id in whole.tables:
        assert restored.stats(table_id) == whole.stats(table_id)


def test_a_round_written_whole_joins_its_small_segments_and_tombstones_the_rest() -> None:
    fold = Fold(journal=True)
    layout = capture.Layout()
    topic: list[state.Entry] = []
    run(rounds(round_event("opened", game="sicbo")), fold)
    for n in range(1, 6):
        run([("bets", bet(n, bet_id=f"B{n}"))], fold)
        topic.extend(layout.changes(fold))
    assert sum(1 for key in _live(topic) if key.startswith(b'["bets"')) == 5
    part = layout.part(fold, ("T1", "R1"))
    assert part is not None
    assert dict(part)[state.bets_key("T1", "R1", 0)] is not None
    assert [dict(part)[state.bets_key("T1", "R1", k)] for k in range(1, 5)] == [None] * 4
    topic.extend(part)
    restored = rebuild.fold_of(_live(topic), horizon=200)
    assert [b.bet_id for b in restored.waiting()] == [f"B{n}" for n in range(1, 6)]


def test_a_part_the_fold_no_longer_holds_is_nothing_to_write() -> None:
    fold = Fold(journal=True)
    run(rounds(round_event("opened", game="sicbo")), fold)
    layout = capture.Layout()
    assert layout.part(fold, ("T1", "R9")) is None
    assert layout.part(fold, ("T9", None)) is None
    assert capture.size(fold, ("T1", "R9")) == 0
    assert [key for key, _ in layout.part(fold, ("T1", None)) or []] == [state.table_key("T1")]


def test_every_key_of_the_state_names_its_kind_and_part() -> None:
    assert state.named(state.board_key("T1")) == ("board", ("T1", None))
    assert state.named(state.round_key("T1", "R1")) == ("round", ("T1", "R1"))
    assert state.named(state.bets_key("T1", "R1", 7)) == ("bets", ("T1", "R1"))
    assert state.named(state.TASK_KEY) is None


def test_every_key_of_the_state_names_its_part() -> None:
    assert state.part_of(state.table_key("T1")) == ("T1", None)
    assert state.part_of(state.board_key("T1")) == ("T1", None)
    assert state.part_of(state.round_key("T1", "R1")) == ("T1", "R1")
    assert state.part_of(state.bets_key("T1", "R1", 7)) == ("T1", "R1")
    assert state.part_of(state.TASK_KEY) is None
    assert state.part_of(b"not json") is None
