"""A whole rewrite of the state, spread over transactions, lets a restore read the state partition
from where the rewrite started: the same fold as reading it all, which stays a whole state too."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from schemas.codec import encode
from services.settlement import capture, state
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
    return state.restore(entries, horizon=horizon), start


def _feed(fold: Fold, batch: list[tuple[str, bytes]]) -> list[bytes]:
    return [encode(record) for topic, raw in batch for record in fold.feed(topic, raw)]


@settings(max_examples=60)
@given(seed=SEEDS, mix=SEEDS, horizon=st.integers(min_value=1, max_value=4))
def test_a_restore_from_the_last_rewrite_goes_on_as_the_uninterrupted_fold(
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
    rewrite: capture.Rewrite | None = None
    snapshot = 0
    for n, batch in enumerate(batches[:cut]):
        assert _feed(first, batch) == expected[n]
        entries = dict(capture.changes(first))
        if rewrite is None and rng.random() < 0.3:
            rewrite = capture.Rewrite(first, len(topic))
        if rewrite is not None:
            entries.update(rewrite.step(first, rng.choice([0, 200, 2000, 100_000])))
            if rewrite.done:
                snapshot, rewrite = rewrite.start, None
        topic.extend(sorted(entries.items()))
        topic.append(state.position_entry(n, n, snapshot, capture.count(first)))
        assert len(_live(topic)) == capture.count(first) + 1
        assert len(_live(topic, snapshot)) == capture.count(first) + 1

    restored, start = _restored(topic, horizon)
    assert start == snapshot
    everything = _live(topic)
    del everything[state.TASK_KEY]
    assert capture.snapshot(state.restore(everything, horizon=horizon)) == capture.snapshot(
        restored
    )
    for n, batch in enumerate(batches[cut:], start=cut):
        assert _feed(restored, batch) == expected[n]
    assert restored.pending == whole.pending
    for table_id in whole.tables:
        assert restored.stats(table_id) == whole.stats(table_id)


def test_a_rewrite_joins_a_rounds_small_segments_and_tombstones_the_rest() -> None:
    fold = Fold(journal=True)
    topic: list[state.Entry] = []
    run(rounds(round_event("opened", game="sicbo")), fold)
    for n in range(1, 6):
        run([("bets", bet(n, bet_id=f"B{n}"))], fold)
        topic.extend(capture.changes(fold))
    assert sum(1 for key in _live(topic) if key.startswith(b'["bets"')) == 5
    rewrite = capture.Rewrite(fold, len(topic))
    part = rewrite.step(fold, 1_000_000)
    assert rewrite.done
    assert dict(part)[state.bets_key("T1", "R1", 0)] is not None
    assert [dict(part)[state.bets_key("T1", "R1", k)] for k in range(1, 5)] == [None] * 4
    topic.extend(part)
    restored = state.restore(_live(topic), horizon=200)
    assert [b.bet_id for b in restored.waiting()] == [f"B{n}" for n in range(1, 6)]


def test_a_rewrite_waits_for_the_credit_a_part_needs_and_keeps_what_is_left() -> None:
    fold = Fold(journal=True)
    run(rounds(round_event("opened", game="sicbo")), fold)
    run([("bets", bet(n, bet_id=f"B{n}")) for n in range(1, 201)], fold)
    capture.changes(fold)
    rewrite = capture.Rewrite(fold, 0)
    table = rewrite.step(fold, 1000)  # the table's own entry fits, the round of 200 bets not yet
    assert [key for key, _ in table] == [state.table_key("T1")]
    assert not rewrite.done
    assert rewrite.step(fold, 1000) == []
    for _ in range(100):
        if rewrite.step(fold, 1000):
            break
    assert rewrite.done
