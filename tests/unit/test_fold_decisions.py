"""Worked examples of the contract's decision table (section 3), one situation per test."""

from __future__ import annotations

from schemas.records import Refund, Rejected, Settlement
from services.settlement.fold import Fold
from tests.unit.builders import bet, bets, round_event, rounds, run, sicbo_round


def test_a_bet_read_before_the_result_settles_when_the_result_comes() -> None:
    fold = Fold()
    assert run(bets(bet(1, "big", stake=100)), fold) == []
    assert [b.bet_id for b in fold.waiting()] == ["T1-R1-1"]
    records = run(rounds(*sicbo_round([4, 5, 6], last_seq=1)), fold)
    assert records == [
        Settlement(
            v=1,
            settlement_id="settlement:T1-R1-1",
            bet_id="T1-R1-1",
            round_id="R1",
            table_id="T1",
            player_id="alice",
            game="sicbo",
            kind="big",
            pick=(),
            stake=100,
            currency="EUR",
            result="win",
            payout=200,
            dice=(4, 5, 6),
            at="2026-11-29T12:01:00Z",
        )
    ]
    assert list(fold.waiting()) == []
    assert fold.pending == 0


def test_a_bet_read_after_the_result_is_decided_at_once_with_the_same_record() -> None:
    before = run(bets(bet(1, "small")) + rounds(*sicbo_round([1, 2, 3], last_seq=1)))
    after = run(rounds(*sicbo_round([1, 2, 3], last_seq=1)) + bets(bet(1, "small")))
    assert before == after
    assert isinstance(before[0], Settlement)
    assert (before[0].result, before[0].payout) == ("win", 200)


def test_big_loses_on_a_triple_and_pays_nothing() -> None:
    records = run(bets(bet(1, "big", stake=250)) + rounds(*sicbo_round([5, 5, 5], last_seq=1)))
    assert isinstance(records[0], Settlement)
    assert (records[0].result, records[0].payout) == ("lose", 0)


def test_a_cancelled_round_refunds_every_confirmed_bet_with_its_stake() -> None:
    fold = Fold()
    run(bets(bet(1, stake=10), bet(2, stake=20, player_id="bob")), fold)
    records = run(
        rounds(
            round_event("opened", game="sicbo"),
            round_event("cancelled", reason="shaker jammed", at="2026-11-29T12:00:30Z"),
        ),
        fold,
    )
    assert records == [
        Refund(
            v=1,
            refund_id="refund:T1-R1-1",
            bet_id="T1-R1-1",
            round_id="R1",
            table_id="T1",
            player_id="alice",
            amount=10,
            currency="EUR",
            reason="round_cancelled",
            at="2026-11-29T12:00:30Z",
        ),
        Refund(
            v=1,
            refund_id="refund:T1-R1-2",
            bet_id="T1-R1-2",
            round_id="R1",
            table_id="T1",
            player_id="bob",
            amount=20,
            currency="EUR",
            reason="round_cancelled",
            at="2026-11-29T12:00:30Z",
        ),
    ]


def test_a_cancellation_after_betting_closed_refunds_late_bets_as_cancelled_too() -> None:
    records = run(
        bets(bet(1), bet(3))
        + rounds(
            round_event("opened", game="sicbo"),
            round_event("betting_closed", last_seq=1),
            round_event("cancelled", reason="dice fell off"),
        )
    )
    assert [(r.bet_id, r.reason) for r in records if isinstance(r, Refund)] == [
        ("T1-R1-1", "round_cancelled"),
        ("T1-R1-3", "round_cancelled"),
    ]


def test_a_bet_with_seq_beyond_last_seq_is_refunded_as_late() -> None:
    records = run(bets(bet(1), bet(2)) + rounds(*sicbo_round([2, 3, 6], last_seq=1)))
    assert isinstance(records[0], Settlement)
    assert isinstance(records[1], Refund)
    assert (records[1].bet_id, records[1].reason, records[1].amount) == ("T1-R1-2", "late_bet", 100)


def test_a_kind_or_pick_that_does_not_exist_for_the_game_is_refunded_as_invalid() -> None:
    records = run(
        bets(
            bet(1, "hi"), bet(2, "single", [7]), bet(3, "combination", [2, 2]), bet(4, "reds", [2])
        )
        + rounds(*sicbo_round([2, 2, 6], last_seq=4))
    )
    assert [(r.bet_id, r.reason) for r in records if isinstance(r, Refund)] == [
        ("T1-R1-1", "invalid_bet"),
        ("T1-R1-2", "invalid_bet"),
        ("T1-R1-3", "invalid_bet"),
        ("T1-R1-4", "invalid_bet"),
    ]


def test_a_late_invalid_bet_is_refunded_as_late_because_that_row_comes_first() -> None:
    records = run(bets(bet(2, "lucky")) + rounds(*sicbo_round([1, 1, 1], last_seq=1)))
    assert isinstance(records[0], Refund)
    assert records[0].reason == "late_bet"


def test_the_same_bet_again_with_a_new_event_id_and_time_is_a_redelivery() -> None:
    records = run(
        bets(bet(1), bet(1, event_id="again", at="2026-11-29T12:00:09+07:00"))
        + rounds(*sicbo_round([3, 4, 6], last_seq=1))
        + bets(bet(1, event_id="third"))
    )
    assert len(records) == 1
    assert isinstance(records[0], Settlement)


def test_the_same_bet_id_with_different_content_is_rejected_and_the_first_stands() -> None:
    second = bet(1, stake=999)
    records = run(bets(bet(1, stake=100), second) + rounds(*sicbo_round([3, 4, 6], last_seq=1)))
    rejected, settled = records
    assert isinstance(rejected, Rejected)
    assert (rejected.reason, rejected.topic, rejected.raw) == (
        "conflicting_duplicate",
        "bets",
        second.decode(),
    )
    assert "stake" in rejected.detail
    assert isinstance(settled, Settlement)
    assert settled.stake == 100


def test_a_second_bet_id_with_the_same_round_and_seq_is_rejected_and_the_first_stands() -> None:
    records = run(
        bets(bet(1, stake=100), bet(1, stake=5, bet_id="other"))
        + rounds(*sicbo_round([3, 4, 6], last_seq=1))
    )
    rejected, settled = records
    assert isinstance(rejected, Rejected)
    assert rejected.reason == "duplicate_seq"
    assert isinstance(settled, Settlement)
    assert (settled.bet_id, settled.stake) == ("T1-R1-1", 100)


def test_a_redelivered_result_pays_nothing_more() -> None:
    opened, closed, result = sicbo_round([6, 6, 5], last_seq=1)
    records = run(bets(bet(1, "double", [6])) + rounds(opened, closed, result, result))
    assert len(records) == 1
    assert isinstance(records[0], Settlement)
    assert records[0].payout == 1100


def test_a_disconnected_players_bet_settles_like_everyone_elses() -> None:
    records = run(
        bets(bet(1, "odd", player_id="gone"), bet(2, "odd", player_id="here"))
        + rounds(*sicbo_round([1, 2, 4], last_seq=2))
    )
    assert [(r.player_id, r.payout) for r in records if isinstance(r, Settlement)] == [
        ("gone", 200),
        ("here", 200),
    ]


def test_xoc_dia_big_is_a_push_on_two_reds_and_returns_the_stake() -> None:
    records = run(
        bets(bet(1, "big", stake=40))
        + rounds(
            round_event("opened", game="xocdia"),
            round_event("betting_closed", last_seq=1),
            round_event("result", discs=["red", "white", "red", "white"]),
        )
    )
    assert isinstance(records[0], Settlement)
    assert (records[0].result, records[0].payout) == ("push", 40)
    assert records[0].discs == ("red", "white", "red", "white")
    assert records[0].dice is None


def test_thai_hilo_lo_at_a_stake_of_one_pays_back_only_the_stake() -> None:
    records = run(
        bets(bet(1, "lo", stake=1))
        + rounds(
            round_event("opened", game="thai-hilo"),
            round_event("betting_closed", last_seq=1),
            round_event("result", dice=[1, 2, 3]),
        )
    )
    assert isinstance(records[0], Settlement)
    assert (records[0].result, records[0].payout) == ("win", 1)


def test_bets_of_different_tables_never_meet() -> None:
    records = run(
        bets(bet(1, table_id="A"), bet(1, table_id="B", bet_id="B-1"))
        + rounds(
            round_event("opened", table_id="A", game="sicbo"),
            round_event("betting_closed", table_id="A", last_seq=1),
            round_event("result", table_id="A", dice=[6, 6, 1]),
        )
    )
    assert [r.bet_id for r in records if isinstance(r, Settlement)] == ["A-R1-1"]
