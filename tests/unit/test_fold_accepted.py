"""The fold's journal lists every accepted input once: never a rejection, never a redelivery."""

from __future__ import annotations

from services.settlement.fold import Fold
from tests.unit.builders import bet, round_event, sicbo_round


def _accepted(messages: list[tuple[str, bytes]]) -> list[bytes]:
    fold = Fold(journal=True)
    for topic, raw in messages:
        fold.feed(topic, raw)
    assert fold.journal is not None
    assert all(event.table_id == "T1" for event, _ in fold.journal.accepted)
    return [raw for _, raw in fold.journal.accepted]


def test_accepted_round_events_and_first_bets_are_journalled_in_reading_order() -> None:
    opened, closed, result = sicbo_round([1, 2, 3], last_seq=2)
    first, second = bet(1), bet(2)
    messages = [("rounds", opened), ("bets", first), ("rounds", closed), ("bets", second)]
    assert _accepted([*messages, ("rounds", result)]) == [opened, first, closed, second, result]


def test_redeliveries_and_rejections_are_not_journalled() -> None:
    opened, closed, result = sicbo_round([1, 2, 3], last_seq=2)
    first = bet(1)
    conflicting = bet(1, stake=999)  # same bet_id, other content
    same_seq = bet(1, bet_id="other")
    never_opened = round_event("betting_closed", round_id="R9", last_seq=1)
    messages = [
        ("rounds", opened),
        ("rounds", opened),
        ("bets", first),
        ("bets", first),
        ("bets", conflicting),
        ("bets", same_seq),
        ("rounds", never_opened),
        ("bets", b"{not json"),
        ("rounds", closed),
        ("rounds", result),
        ("rounds", result),
    ]
    assert _accepted(messages) == [opened, first, closed, result]


def test_a_fold_without_a_journal_keeps_none() -> None:
    fold = Fold()
    fold.feed("rounds", sicbo_round([1, 2, 3], last_seq=1)[0])
    assert fold.journal is None
