"""The state store writes, transaction by transaction, a changelog that a restore from the
position's snapshot offset turns back into the uninterrupted fold; its whole rewrites start when
the tail outgrows the live state and keep what a restore reads bounded."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from schemas.codec import encode
from services.settlement import capture, state, store
from services.settlement.fold import Fold
from services.settlement.store import Found, Store
from services.simulation.streams import Profile, generate, interleave
from tests.unit.test_state_rewrite import _live

SEEDS = st.integers(min_value=0, max_value=2**32)


def _feed(fold: Fold, batch: list[tuple[str, bytes]]) -> list[bytes]:
    return [encode(record) for topic, raw in batch for record in fold.feed(topic, raw)]


def _restore(topic: list[state.Entry], horizon: int) -> tuple[Fold, state.Position]:
    position = state.read_position(_live(topic)[state.TASK_KEY])
    entries = _live(topic, position.snapshot)
    del entries[state.TASK_KEY]
    return state.restore(entries, horizon=horizon), position


def _write(topic: list[state.Entry], shop: Store, fold: Fold, n: int, credit: int = 0) -> None:
    """One committed transaction of the store: its entries appended, the end given back."""
    topic.extend(shop.entries(fold, {"rounds": n, "bets": n}, credit))
    shop.committed(len(topic))


@settings(max_examples=40, deadline=None)
@given(seed=SEEDS, mix=SEEDS, horizon=st.integers(min_value=1, max_value=4))
def test_a_restore_of_the_stores_changelog_goes_on_as_the_uninterrupted_fold(
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
    shop = Store(end=0)
    for n, batch in enumerate(batches[:cut]):
        assert _feed(first, batch) == expected[n]
        _write(topic, shop, first, n + 1, credit=rng.choice([0, 0, 5000]))
        assert len(_live(topic, shop.snapshot)) == capture.count(first) + 1

    restored, position = _restore(topic, horizon)
    assert (position.rounds, position.bets) == (cut, cut)
    assert position.snapshot == shop.snapshot
    for n, batch in enumerate(batches[cut:], start=cut):
        assert _feed(restored, batch) == expected[n]
    assert restored.pending == whole.pending


def test_a_whole_rewrite_starts_once_the_tail_outgrows_the_floor_and_moves_the_snapshot() -> None:
    messages = interleave(generate(7, tables=4, rounds=200), random.Random(7))
    fold = Fold(horizon=5, journal=True)
    topic: list[state.Entry] = []
    shop = Store(end=0)
    rewrites = 0
    for n, at in enumerate(range(0, len(messages), 5)):
        for role, raw in messages[at : at + 5]:
            fold.feed(role, raw)
        topic.extend(shop.entries(fold, {"rounds": n, "bets": n}))
        rewrites += shop.committed(len(topic))
    assert len(topic) > store.REWRITE_RECORDS
    assert rewrites >= 1
    assert shop.snapshot > 0
    read = len(topic) - shop.snapshot
    assert read < len(topic) / 2
    assert len(_live(topic, shop.snapshot)) == capture.count(fold) + 1


def test_after_a_refold_the_first_transaction_writes_the_whole_state_and_tombstones_the_rest() -> (
    None
):
    fold = Fold(horizon=3, journal=True)
    for role, raw in interleave(generate(3, tables=2, rounds=4), random.Random(3)):
        fold.feed(role, raw)
    stale = frozenset({state.round_key("gone", "R0"), state.table_key("gone")})
    shop = Store.restored(
        Found(start=0, end=40, records=40, size=4000, live_records=2, live_size=100), stale
    )
    entries = shop.entries(fold, {"rounds": 9, "bets": 9})
    tombstones = {key for key, value in entries if value is None}
    assert tombstones == stale
    assert len(entries) == capture.count(fold) + len(stale) + 1
    position = state.read_position(entries[-1][1] or b"")
    assert position.snapshot == 40
    assert shop.committed(90)
    assert (shop.stale, shop.snapshot, shop.end, shop.tail) == (None, 40, 90, (0, 0))


def test_a_rewrite_that_fell_due_with_the_last_batch_is_finished_by_idle_transactions() -> None:
    messages = interleave(generate(11, tables=4, rounds=200), random.Random(11))
    fold = Fold(horizon=5, journal=True)
    topic: list[state.Entry] = []
    shop = Store(end=0)
    for n, at in enumerate(range(0, len(messages), 5)):
        for role, raw in messages[at : at + 5]:
            fold.feed(role, raw)
        topic.extend(shop.entries(fold, {"rounds": n, "bets": n}))
        shop.committed(len(topic))
        if shop.rewrite is None and shop.rewriting:
            break  # the input stops here: no batch comes to start the rewrite that fell due
    else:
        raise AssertionError("the tail never outgrew the floor")
    idle = 0
    while shop.rewriting:
        topic.extend(shop.entries(fold, {"rounds": n, "bets": n}, store.IDLE_CREDIT))
        done = shop.committed(len(topic))
        idle += 1
        assert idle < 100
    assert done and shop.snapshot > 0
    assert len(_live(topic, shop.snapshot)) == capture.count(fold) + 1
