"""The round life cycle (contract section 2): allowed transitions, and everything else refused."""

from __future__ import annotations

import pytest

from schemas.records import Rejected, Settlement
from services.settlement.fold import Fold
from tests.unit.builders import bet, bets, round_event, rounds, run


def _rejections(records: list[object]) -> list[tuple[str, str]]:
    return [(r.reason, r.detail) for r in records if isinstance(r, Rejected)]


def test_a_result_before_betting_closed_is_an_invalid_transition_and_changes_nothing() -> None:
    fold = Fold()
    run(bets(bet(1)), fold)
    records = run(
        rounds(round_event("opened", game="sicbo"), round_event("result", dice=[1, 2, 3])), fold
    )
    assert [reason for reason, _ in _rejections(records)] == ["invalid_transition"]
    assert fold.pending == 1
    late = run(
        rounds(
            round_event("betting_closed", last_seq=1),
            round_event("result", dice=[1, 2, 3], event_id="r2"),
        ),
        fold,
    )
    assert [type(r) for r in late] == [Settlement]


def test_a_result_during_a_suspension_is_refused_and_accepted_once_resumed() -> None:
    records = run(
        bets(bet(1, "small"))
        + rounds(
            round_event("opened", game="sicbo"),
            round_event("betting_closed", last_seq=1),
            round_event("suspended", reason="dice off the table"),
            round_event("result", dice=[1, 1, 2], event_id="too-soon"),
            round_event("resumed"),
            round_event("result", dice=[1, 1, 2]),
        )
    )
    assert [type(r).__name__ for r in records] == ["Rejected", "Settlement"]
    assert records[0].reason == "invalid_transition"  # type: ignore[union-attr]
    assert "suspended" in records[0].detail  # type: ignore[union-attr]


def test_resumed_without_a_suspension_is_refused() -> None:
    records = run(rounds(round_event("opened", game="sicbo"), round_event("resumed")))
    assert [reason for reason, _ in _rejections(records)] == ["invalid_transition"]


def test_two_suspensions_need_two_resumptions_before_a_result() -> None:
    records = run(
        rounds(
            round_event("opened", game="sicbo"),
            round_event("betting_closed", last_seq=0),
            round_event("suspended", event_id="s1"),
            round_event("suspended", event_id="s2"),
            round_event("resumed", event_id="u1"),
            round_event("result", dice=[1, 1, 2], event_id="early"),
            round_event("resumed", event_id="u2"),
            round_event("result", dice=[1, 1, 2]),
        )
    )
    assert [reason for reason, _ in _rejections(records)] == ["invalid_transition"]


def test_betting_cannot_close_while_suspended() -> None:
    records = run(
        rounds(
            round_event("opened", game="sicbo"),
            round_event("suspended"),
            round_event("betting_closed", last_seq=0),
        )
    )
    assert [reason for reason, _ in _rejections(records)] == ["invalid_transition"]


def test_a_reshake_is_allowed_only_after_betting_closed_and_changes_nothing() -> None:
    records = run(
        bets(bet(1, "big"))
        + rounds(
            round_event("opened", game="sicbo"),
            round_event("reshaken", event_id="early", reason="x"),
            round_event("betting_closed", last_seq=1),
            round_event("reshaken", reason="dice not flat"),
            round_event("result", dice=[6, 5, 4]),
        )
    )
    assert [type(r).__name__ for r in records] == ["Rejected", "Settlement"]


def test_a_cancelled_round_can_be_cancelled_while_suspended() -> None:
    records = run(
        bets(bet(1))
        + rounds(
            round_event("opened", game="sicbo"), round_event("suspended"), round_event("cancelled")
        )
    )
    assert [type(r).__name__ for r in records] == ["Refund"]


@pytest.mark.parametrize(
    ("final", "after"),
    [
        ("result", "cancelled"),
        ("result", "suspended"),
        ("result", "reshaken"),
        ("cancelled", "result"),
        ("cancelled", "betting_closed"),
        ("cancelled", "cancelled"),
    ],
)
def test_nothing_happens_to_a_round_after_its_fate(final: str, after: str) -> None:
    fate = (
        round_event("result", dice=[2, 2, 2])
        if final == "result"
        else round_event("cancelled", reason="void")
    )
    extra = (
        {"dice": [1, 2, 3]}
        if after == "result"
        else {"last_seq": 0}
        if after == "betting_closed"
        else {}
    )
    records = run(
        rounds(
            round_event("opened", game="sicbo"),
            round_event("betting_closed", last_seq=0),
            fate,
            round_event(after, event_id="after", **extra),
        )
    )
    assert [reason for reason, _ in _rejections(records)] == ["invalid_transition"]


def test_events_of_a_round_that_was_never_opened_are_refused() -> None:
    records = run(
        rounds(round_event("betting_closed", last_seq=3), round_event("result", dice=[1, 2, 3]))
    )
    assert [reason for reason, _ in _rejections(records)] == ["invalid_transition"] * 2


def test_opening_a_round_twice_is_refused_but_the_same_event_again_is_a_redelivery() -> None:
    opened = round_event("opened", game="sicbo")
    records = run(rounds(opened, opened, round_event("opened", game="sicbo", event_id="other")))
    assert [reason for reason, _ in _rejections(records)] == ["invalid_transition"]


def test_a_result_with_discs_for_a_dice_game_is_an_invalid_field() -> None:
    records = run(
        rounds(
            round_event("opened", game="sicbo"),
            round_event("betting_closed", last_seq=0),
            round_event("result", discs=["red", "red", "red", "red"]),
        )
    )
    assert _rejections(records)[0][0] == "invalid_field"
    assert _rejections(records)[0][1].startswith("dice:")


def test_a_rejected_round_event_keeps_its_input_verbatim_and_the_rounds_topic() -> None:
    raw = round_event("resumed")
    (record,) = run(rounds(round_event("opened", game="sicbo"), raw))
    assert isinstance(record, Rejected)
    assert (record.topic, record.raw) == ("rounds", raw.decode())


def test_a_replay_line_nested_too_deeply_is_rejected_as_malformed_and_never_raises() -> None:
    (record,) = Fold().feed(None, b"[" * 100_000)
    assert isinstance(record, Rejected)
    assert (record.reason, record.topic) == ("malformed", "rounds")
