"""The wallet emulator credits each settlement or refund id once, whatever is replayed."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from msgspec.structs import replace

from schemas.codec import encode
from schemas.records import Refund, Settlement
from services.audit.wallet import Wallet
from services.settlement.fold import Fold
from services.simulation.streams import generate
from tests.unit.builders import bet, bets, round_event, rounds, run, sicbo_round


def _credits() -> list[Settlement | Refund]:
    records = run(
        [
            *rounds(*sicbo_round([4, 5, 6], last_seq=3)),
            *bets(
                bet(1, "big", stake=100),
                bet(2, "small", stake=50, player_id="bob"),
                bet(3, "big", stake=10, currency="USD"),
                bet(4, "big", stake=7),
            ),
        ]
    )
    return [r for r in records if isinstance(r, Settlement | Refund)]


def test_a_win_a_loss_and_a_refund_credit_payout_nothing_and_the_stake() -> None:
    wallet = Wallet()
    assert wallet.apply_all(_credits()) == 4
    assert wallet.balances == {("alice", "EUR"): 200 + 7, ("bob", "EUR"): 0, ("alice", "USD"): 20}


def test_applying_the_same_stream_twice_changes_nothing() -> None:
    wallet = Wallet()
    wallet.apply_all(_credits())
    once = dict(wallet.balances)
    assert [wallet.apply(r) for r in _credits()] == [False] * 4
    assert wallet.balances == once
    assert wallet.conflicts == []


def test_a_repeated_id_with_another_amount_is_not_credited_but_noted() -> None:
    wallet = Wallet()
    first = _credits()[0]
    assert isinstance(first, Settlement)
    assert wallet.apply(first)
    assert not wallet.apply(replace(first, payout=first.payout * 2))
    assert wallet.balances == {("alice", "EUR"): 200}
    assert wallet.conflicts == [first.settlement_id]


def test_raw_messages_are_read_as_settlements_or_refunds() -> None:
    wallet = Wallet()
    assert [wallet.apply_raw(encode(r)) for r in _credits()] == [True] * 4
    assert wallet.apply_raw(encode(_credits()[3])) is False


def test_a_cancelled_round_gives_every_stake_back() -> None:
    records = run(
        [
            *rounds(round_event("opened", game="xocdia"), round_event("cancelled", reason="x")),
            *bets(bet(1, "odd", stake=30), bet(2, "even", stake=12)),
        ]
    )
    wallet = Wallet()
    wallet.apply_all([r for r in records if isinstance(r, Refund)])
    assert wallet.balances == {("alice", "EUR"): 42}


@given(seed=st.integers(0, 10_000), repeats=st.lists(st.integers(0, 200), max_size=40))
def test_any_redelivery_of_a_stream_gives_the_balances_of_one_delivery(
    seed: int, repeats: list[int]
) -> None:
    streams = generate(seed, tables=2, rounds=3)
    fold = Fold()
    credits = [
        r
        for kind, raw in streams.tagged()
        for r in fold.feed(kind, raw)
        if isinstance(r, Settlement | Refund)
    ]
    once, again = Wallet(), Wallet()
    once.apply_all(credits)
    redelivered = credits + [credits[i % len(credits)] for i in repeats] if credits else []
    again.apply_all(redelivered)
    again.apply_all(credits)
    assert again.balances == once.balances
    assert again.conflicts == []
