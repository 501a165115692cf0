"""The state store writes, transaction by transaction, a changelog that a restore from the
position's snapshot offset turns back into the uninterrupted fold; once the partition from that
offset on outgrows the live state, it writes the oldest parts again, so that what a restore reads
stays about twice the live state's bytes at every transaction, not only after a rewrite
completes."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from schemas.codec import encode
from services.settlement import capture, rebuild, state, store
from services.settlement.fold import Fold
from services.settlement.store import Found, Store
from services.simulation.streams import Profile, generate, interleave
from tests.unit.builders import bet, round_event, rounds, run
from tests.unit.test_state_rewrite import _live

SEEDS = st.integers(min_value=0, max_value=2**32)


def _feed(fold: Fold, batch: list[tuple[str, bytes]]) -> list[bytes]:
    return [encode(record) for topic, raw in batch for record in fold.feed(topic, raw)]


def _offsets(topic: list[state.Entry], start: int) -> dict[bytes, int]:
    """Where each live entry read from `start` was written (what a restore hands the store)."""
    offsets: dict[bytes, int] = {}
    for offset, (key, value) in enumerate(topic[start:], start=start):
        if value is None:
            offsets.pop(key, None)
        else:
            offsets[key] = offset
    return offsets


def _bytes(entries: list[state.Entry]) -> int:
    return sum(len(key) + len(value or b"") for key, value in entries)


def _restore(topic: list[state.Entry], horizon: int, floor: int) -> tuple[Fold, Store]:
    """The fold and the store a restore builds from the topic's latest position on."""
    position = state.read_position(_live(topic)[state.TASK_KEY])
    entries = _live(topic, position.snapshot)
    del entries[state.TASK_KEY]
    found = Found(
        start=position.snapshot,
        end=len(topic),
        records=len(topic) - position.snapshot,
        size=_bytes(topic[position.snapshot :]),
        live_records=len(entries),
        live_size=_bytes(list(entries.items())),
    )
    shop = Store.restored(found, None, entries, _offsets(topic, position.snapshot))
    shop.floor = floor
    return rebuild.fold_of(entries, horizon=horizon), shop


def _write(topic: list[state.Entry], shop: Store, fold: Fold, n: int, credit: int = 0) -> None:
    """One committed transaction of the store: its entries appended, the end given back."""
    topic.extend(shop.entries(fold, {"rounds": n, "bets": n}, credit))
    shop.committed(len(topic))


@settings(max_examples=40, deadline=None)
@given(
    seed=SEEDS,
    mix=SEEDS,
    horizon=st.integers(min_value=1, max_value=4),
    floor=st.sampled_from([0, 2_000, store.FLOOR]),
)
def test_a_restore_of_the_stores_changelog_goes_on_as_the_uninterrupted_fold(
    seed: int, mix: int, horizon: int, floor: int
) -> None:
    rng = random.Random(mix)
    messages = interleave(generate(seed, tables=3, rounds=9, profile=Profile(correct=0.3)), rng)
    batches = [messages[at : at + rng.randint(1, 12)] for at in range(0, len(messages), 12)]
    cuts = sorted(rng.sample(range(1, len(batches) + 1), k=min(2, len(batches))))
    whole = Fold(horizon=horizon)
    expected = [_feed(whole, batch) for batch in batches]

    topic: list[state.Entry] = []
    fold, shop = Fold(horizon=horizon, journal=True), Store(end=0, floor=floor)
    at = 0
    for cut in cuts:  # restored at each cut, as a takeover would, then going on from there
        for n in range(at, cut):
            assert _feed(fold, batches[n]) == expected[n]
            _write(topic, shop, fold, n + 1, credit=rng.choice([0, 0, 5000]))
            assert len(_live(topic, shop.snapshot)) == shop.layout.count(fold) + 1
        position = state.read_position(_live(topic)[state.TASK_KEY])
        assert (position.rounds, position.bets, position.snapshot) == (cut, cut, shop.snapshot)
        fold, shop = _restore(topic, horizon, floor)
        fold.journal = Fold(journal=True).journal
        at = cut
    for n in range(at, len(batches)):
        assert _feed(fold, batches[n]) == expected[n]
    assert fold.pending == whole.pending


def _long_run(floor: int) -> tuple[list[state.Entry], Store, Fold, list[float]]:
    """Eight tables of 300 rounds, the last 50 decided of each kept, 50 events a transaction; the
    bytes a restore would read at each transaction, over the live state's then."""
    messages = interleave(generate(7, tables=8, rounds=300), random.Random(7))
    fold = Fold(horizon=50, journal=True)
    topic: list[state.Entry] = []
    shop = Store(end=0, floor=floor)
    spans: list[float] = []
    for n, at in enumerate(range(0, len(messages), 50)):
        for role, raw in messages[at : at + 50]:
            fold.feed(role, raw)
        _write(topic, shop, fold, n)
        read = topic[shop.snapshot :]
        spans.append(_bytes(read) / _bytes(list(_live(read).items())))
    return topic, shop, fold, spans


def test_what_a_restore_reads_stays_about_twice_the_live_state_at_every_transaction() -> None:
    topic, shop, fold, spans = _long_run(floor=0)
    assert _bytes(topic) > 10 * _bytes(list(_live(topic).items()))  # a long history
    assert max(spans[len(spans) // 5 :]) < store.SPAN + 0.5
    assert len(_live(topic, shop.snapshot)) == shop.layout.count(fold) + 1


def test_under_the_floor_nothing_is_written_again() -> None:
    topic, shop, _, _ = _long_run(floor=10**9)
    assert shop.end == len(topic) > 0
    assert shop.snapshot == 0
    assert not shop.cleaning


def test_after_a_refold_the_first_transaction_writes_the_whole_state_and_tombstones_the_rest() -> (
    None
):
    fold = Fold(horizon=3, journal=True)
    for role, raw in interleave(generate(3, tables=2, rounds=4), random.Random(3)):
        fold.feed(role, raw)
    stale = frozenset({state.round_key("gone", "R0"), state.table_key("gone")})
    shop = Store.restored(
        Found(start=0, end=40, records=40, size=4000, live_records=2, live_size=100),
        stale,
        {},
        {},
    )
    entries = shop.entries(fold, {"rounds": 9, "bets": 9})
    tombstones = {key for key, value in entries if value is None}
    assert tombstones == stale
    assert len(entries) == shop.layout.count(fold) + len(stale) + 1
    position = state.read_position(entries[-1][1] or b"")
    assert position.snapshot == 40
    shop.committed(90)
    assert (shop.stale, shop.snapshot, shop.end) == (None, 40, 90)


def test_a_store_that_fell_behind_with_the_last_batch_catches_up_in_idle_transactions() -> None:
    topic, shop, fold, _ = _long_run(floor=10**9)  # nothing written again all along
    assert _bytes(topic) > 5 * shop.live
    shop.floor = 0  # the input stops here, the store far behind
    idle = 0
    while shop.cleaning:
        _write(topic, shop, fold, 0, store.IDLE_CREDIT)
        idle += 1
        assert idle < 100
    read = topic[shop.snapshot :]
    assert _bytes(read) <= store.SPAN * _bytes(list(_live(read).items()))
    assert len(_live(topic, shop.snapshot)) == shop.layout.count(fold) + 1


def test_an_oldest_part_waits_for_the_credit_it_needs_and_the_credit_left_carries_over() -> None:
    fold = Fold(journal=True)
    run(rounds(round_event("opened", game="sicbo")), fold)
    run([("bets", bet(n, bet_id=f"B{n}")) for n in range(1, 201)], fold)
    topic: list[state.Entry] = []
    shop = Store(end=0, floor=10**9)
    _write(topic, shop, fold, 1)
    assert list(shop.ages) == [("T1", "R1"), ("T1", None)]  # as first written, oldest first
    shop.floor = 0
    earning = 0
    while shop.snapshot == 0:  # 4,096 bytes earned a transaction while cleaning: the round waits
        earning += shop.cleaning
        _write(topic, shop, fold, 2)
    assert earning * 4096 >= capture.size(fold, ("T1", "R1")) > (earning - 1) * 4096
    assert list(shop.ages) == [("T1", "R1"), ("T1", None)]  # both written again, in that order
    assert len(_live(topic, shop.snapshot)) == shop.layout.count(fold) + 1
