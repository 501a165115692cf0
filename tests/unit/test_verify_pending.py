"""Pending bets are reported with their age on the stream's clock and on the wall clock."""

from __future__ import annotations

from datetime import UTC, datetime

from services.audit.pending import pending
from services.settlement.fold import Fold
from tests.unit.builders import bet, bets, round_event, rounds, run


def test_a_bet_of_an_undecided_round_is_pending_with_its_ages() -> None:
    fold = Fold()
    run(
        [
            *rounds(round_event("opened", game="sicbo", at="2026-11-29T12:00:00Z")),
            *bets(
                bet(1, at="2026-11-29T12:00:10Z"),
                bet(2, at="2026-11-29T12:01:40Z", player_id="bob"),
            ),
        ],
        fold,
    )
    newest = datetime(2026, 11, 29, 12, 2, 0, tzinfo=UTC)
    now = datetime(2026, 11, 30, 12, 0, 10, tzinfo=UTC)
    found = pending(fold.waiting(), newest, now)
    assert [(p.bet_id, p.age_s, p.wall_age_s) for p in found] == [
        ("T1-R1-1", 110.0, 86400.0),
        ("T1-R1-2", 20.0, 86310.0),
    ]
    assert found[0].at == "2026-11-29T12:00:10Z"
    assert (found[1].player_id, found[1].stake, found[1].currency) == ("bob", 100, "EUR")


def test_a_decided_round_leaves_nothing_pending() -> None:
    fold = Fold()
    run(
        [
            *rounds(round_event("opened", game="sicbo"), round_event("cancelled", reason="x")),
            *bets(bet(1)),
        ],
        fold,
    )
    assert pending(fold.waiting(), None, datetime(2026, 11, 29, tzinfo=UTC)) == []
