"""Corrections and voids after a result, worked examples for each game (contract section 3a)."""

from __future__ import annotations

from typing import Any

from schemas.records import Adjustment, Record, Refund, Rejected, Settlement
from services.settlement.fold import Fold
from tests.unit.builders import bet, round_event, rounds, run

AT = "2026-11-29T12:01:00Z"


def _round(game: str, last_seq: int, **outcome: Any) -> list[tuple[str, bytes]]:
    return rounds(
        round_event("opened", game=game),
        round_event("betting_closed", last_seq=last_seq),
        round_event("result", at=AT, **outcome),
    )


def _correct(n: int, **outcome: Any) -> list[tuple[str, bytes]]:
    return rounds(
        round_event(
            "corrected",
            event_id=f"T1/R1/corrected/{n}",
            at=f"2026-11-29T12:1{n}:00Z",
            reason=f"dealer misread ({n})",
            authorized_by="supervisor-ana",
            **outcome,
        )
    )


def _void() -> list[tuple[str, bytes]]:
    return rounds(
        round_event(
            "voided",
            at="2026-11-29T12:30:00Z",
            reason="shaker jammed, seen on video",
            authorized_by="supervisor-ana",
        )
    )


def _adjustments(records: list[Record]) -> list[tuple[str, str, str, int, int, int]]:
    return [
        (r.adjustment_id, r.cause, r.result, r.previous_payout, r.payout, r.delta)
        for r in records
        if isinstance(r, Adjustment)
    ]


def test_a_sicbo_win_corrected_to_a_loss_is_debited_its_whole_payout() -> None:
    fold = Fold()
    settled = run([*_round("sicbo", 1, dice=[4, 5, 6]), ("bets", bet(1, "big"))], fold)
    assert [(r.result, r.payout) for r in settled if isinstance(r, Settlement)] == [("win", 200)]
    records = run(_correct(1, dice=[1, 2, 3]), fold)
    assert _adjustments(records) == [("adjustment:1:T1-R1-1", "correction", "lose", 200, 0, -200)]
    (adjustment,) = records
    assert isinstance(adjustment, Adjustment)
    assert adjustment.settlement_id == "settlement:T1-R1-1"
    assert adjustment.dice == (1, 2, 3) and adjustment.discs is None
    assert adjustment.reason == "dealer misread (1)"
    assert adjustment.authorized_by == "supervisor-ana"
    assert adjustment.at == "2026-11-29T12:11:00Z"
    assert (adjustment.player_id, adjustment.currency, adjustment.n) == ("alice", "EUR", 1)


def test_a_thai_hilo_loss_corrected_to_a_win_is_credited_its_payout() -> None:
    fold = Fold()
    run([*_round("thai-hilo", 1, dice=[1, 2, 3]), ("bets", bet(1, "hi"))], fold)
    records = run(_correct(1, dice=[6, 5, 4]), fold)
    assert _adjustments(records) == [("adjustment:1:T1-R1-1", "correction", "win", 0, 210, 210)]


def test_two_corrections_in_a_row_adjust_from_the_payout_each_left() -> None:
    fold = Fold()
    run([*_round("sicbo", 1, dice=[4, 5, 6]), ("bets", bet(1, "big"))], fold)
    first = run(_correct(1, dice=[1, 2, 3]), fold)
    second = run(_correct(2, dice=[5, 5, 6]), fold)
    assert _adjustments(first + second) == [
        ("adjustment:1:T1-R1-1", "correction", "lose", 200, 0, -200),
        ("adjustment:2:T1-R1-1", "correction", "win", 0, 200, 200),
    ]


def test_a_correction_that_leaves_a_payout_unchanged_adjusts_only_the_bets_it_changes() -> None:
    fold = Fold()
    bets = [("bets", bet(1, "big")), ("bets", bet(2, "single", pick=[4]))]
    run([*_round("sicbo", 2, dice=[4, 5, 6]), *bets], fold)
    records = run(_correct(1, dice=[5, 5, 6]), fold)  # still big; no 4 any more
    assert _adjustments(records) == [("adjustment:1:T1-R1-2", "correction", "lose", 200, 0, -200)]


def test_a_xocdia_big_corrected_to_two_reds_pushes() -> None:
    fold = Fold()
    three_reds = ["red", "red", "red", "white"]
    run([*_round("xocdia", 1, discs=three_reds), ("bets", bet(1, "big"))], fold)
    records = run(_correct(1, discs=["red", "white", "red", "white"]), fold)
    assert _adjustments(records) == [("adjustment:1:T1-R1-1", "correction", "push", 196, 100, -96)]
    (adjustment,) = records
    assert isinstance(adjustment, Adjustment)
    assert adjustment.discs == ("red", "white", "red", "white") and adjustment.dice is None


def test_a_void_after_a_correction_pays_back_the_stake() -> None:
    fold = Fold()
    run([*_round("sicbo", 1, dice=[4, 5, 6]), ("bets", bet(1, "big"))], fold)
    records = run([*_correct(1, dice=[1, 2, 3]), *_void()], fold)
    assert _adjustments(records) == [
        ("adjustment:1:T1-R1-1", "correction", "lose", 200, 0, -200),
        ("adjustment:2:T1-R1-1", "void", "void", 0, 100, 100),
    ]
    void = records[1]
    assert isinstance(void, Adjustment)
    assert void.dice is None and void.discs is None


def test_a_void_gives_a_losing_bet_its_stake_and_takes_a_winning_bets_winnings_back() -> None:
    fold = Fold()
    run(
        [*_round("sicbo", 2, dice=[4, 5, 6]), ("bets", bet(1, "small")), ("bets", bet(2, "big"))],
        fold,
    )
    assert _adjustments(run(_void(), fold)) == [
        ("adjustment:1:T1-R1-1", "void", "void", 0, 100, 100),
        ("adjustment:1:T1-R1-2", "void", "void", 200, 100, -100),
    ]


def test_a_bet_read_after_the_corrections_gets_the_records_of_one_read_before() -> None:
    events = [*_round("sicbo", 1, dice=[4, 5, 6]), *_correct(1, dice=[1, 2, 3])]
    events += [*_correct(2, dice=[2, 2, 2]), *_void()]
    before = run([*events[:3], ("bets", bet(1, "big")), *events[3:]])
    after = run([*events, ("bets", bet(1, "big"))])
    assert sorted(map(repr, before)) == sorted(map(repr, after))
    assert [type(r).__name__ for r in after] == ["Settlement", "Adjustment", "Adjustment"]
    assert _adjustments(after) == [
        ("adjustment:1:T1-R1-1", "correction", "lose", 200, 0, -200),
        ("adjustment:3:T1-R1-1", "void", "void", 0, 100, 100),
    ]


def test_refunded_bets_are_left_alone_by_corrections_and_voids() -> None:
    fold = Fold()
    late = ("bets", bet(2, "big"))
    invalid = ("bets", bet(1, "no-such-bet"))
    refunds = run([*_round("sicbo", 1, dice=[4, 5, 6]), late, invalid], fold)
    assert sorted(r.reason for r in refunds if isinstance(r, Refund)) == ["invalid_bet", "late_bet"]
    assert run([*_correct(1, dice=[1, 2, 3]), *_void()], fold) == []


def _refused(events: list[tuple[str, bytes]], fold: Fold | None = None) -> list[tuple[str, str]]:
    return [(r.reason, r.detail) for r in run(events, fold) if isinstance(r, Rejected)]


def test_a_correction_to_the_outcome_the_round_already_has_is_refused() -> None:
    fold = Fold()
    run([*_round("sicbo", 1, dice=[4, 5, 6]), ("bets", bet(1, "big"))], fold)
    assert _refused(_correct(1, dice=[6, 5, 4]), fold) == []  # another order: another outcome
    (refusal,) = _refused(_correct(2, dice=[6, 5, 4]), fold)
    assert refusal[0] == "invalid_transition"
    assert "the outcome the round already has" in refusal[1]


def test_a_correction_or_void_before_the_result_is_refused() -> None:
    events = rounds(round_event("opened", game="sicbo"), round_event("betting_closed", last_seq=1))
    fold = Fold()
    run(events, fold)
    refused = _refused([*_correct(1, dice=[1, 2, 3]), *_void()], fold)
    assert [reason for reason, _ in refused] == ["invalid_transition"] * 2
    assert "while the round is closed for bets" in refused[0][1]


def test_a_correction_or_void_after_a_cancel_is_refused() -> None:
    fold = Fold()
    run(rounds(round_event("opened", game="sicbo"), round_event("cancelled")), fold)
    refused = _refused([*_correct(1, dice=[1, 2, 3]), *_void()], fold)
    assert refused == [
        ("invalid_transition", "round.corrected while the round is cancelled"),
        ("invalid_transition", "round.voided while the round is cancelled"),
    ]


def test_nothing_may_follow_a_void() -> None:
    fold = Fold()
    run([*_round("sicbo", 1, dice=[4, 5, 6]), *_void()], fold)
    again = rounds(round_event("voided", event_id="v2", reason="again", authorized_by="x"))
    refused = _refused([*_correct(1, dice=[1, 2, 3]), *again], fold)
    assert refused == [
        ("invalid_transition", "round.corrected while the round is voided"),
        ("invalid_transition", "round.voided while the round is voided"),
    ]


def test_a_correction_of_the_wrong_shape_is_an_invalid_field() -> None:
    fold = Fold()
    run(_round("sicbo", 0, dice=[4, 5, 6]), fold)
    ((reason, detail),) = _refused(_correct(1, discs=["red", "red", "red", "red"]), fold)
    assert reason == "invalid_field"
    assert detail.startswith("dice:")


def test_a_correction_of_a_round_past_the_horizon_is_refused_and_says_so() -> None:
    fold = Fold(horizon=1)
    for n in (1, 2, 3):
        round_id = f"R{n}"
        run(
            rounds(
                round_event("opened", round_id, game="sicbo"),
                round_event("betting_closed", round_id, last_seq=1),
                round_event("result", round_id, dice=[4, 5, 6]),
            ),
            fold,
        )
        run([("bets", bet(1, "big", round_id=round_id))], fold)
    assert "R1" not in fold.tables["T1"].rounds
    ((reason, detail),) = _refused(_correct(1, dice=[1, 2, 3]), fold)
    assert reason == "invalid_transition"
    assert "decided more than 1 rounds of its table ago" in detail


def test_a_redelivered_correction_changes_nothing() -> None:
    fold = Fold()
    run([*_round("sicbo", 1, dice=[4, 5, 6]), ("bets", bet(1, "big"))], fold)
    assert len(run(_correct(1, dice=[1, 2, 3]), fold)) == 1
    assert run(_correct(1, dice=[1, 2, 3]), fold) == []


def test_the_board_shows_a_corrected_round_in_its_place_and_leaves_a_voided_one_out() -> None:
    fold = Fold()
    for n in range(1, 53):
        round_id = f"R{n}"
        run(
            rounds(
                round_event("opened", round_id, game="sicbo"),
                round_event("betting_closed", round_id, last_seq=0),
                round_event("result", round_id, dice=[1, 1, (n % 6) + 1]),
            ),
            fold,
        )
    shown = fold.stats("T1")
    assert shown is not None and [r.round_id for r in shown.rounds][:2] == ["R52", "R51"]
    assert len(shown.rounds) == 50 and shown.rounds[-1].round_id == "R3"
    run(
        rounds(
            round_event("corrected", "R51", dice=[6, 6, 6], reason="misread", authorized_by="ana")
        ),
        fold,
    )
    run(rounds(round_event("voided", "R52", reason="fault", authorized_by="ana")), fold)
    board = fold.stats("T1")
    assert board is not None
    assert board.rounds[0].round_id == "R51" and board.rounds[0].dice == (6, 6, 6)
    assert len(board.rounds) == 50 and board.rounds[-1].round_id == "R2"  # the 51st comes back
    triples = sum(1 for r in board.rounds if r.dice is not None and len(set(r.dice)) == 1)
    assert board.counts["triple"] == triples
    assert triples == 1 + sum(1 for n in range(2, 51) if n % 6 == 0)  # R51's 6-6-6 and 1-1-1s
    assert "R52" not in [r.round_id for r in board.rounds]
