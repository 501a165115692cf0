"""`Fold.feed` is the fold's one way in: by topic (the workers, verify) or as a replay line."""

from __future__ import annotations

from schemas.records import Record, Rejected, Settlement
from services.settlement.fold import Fold
from tests.unit.builders import bet, sicbo_round


def _messages() -> list[tuple[str, bytes]]:
    opened, closed, result = sicbo_round([6, 5, 1], last_seq=2)
    return [
        ("rounds", opened),
        ("bets", bet(1, "big")),
        ("bets", bet(2, "small")),
        ("bets", bet(2, "big", bet_id="another")),
        ("rounds", closed),
        ("rounds", result),
        ("bets", bet(3, "big")),
    ]


def test_feed_appends_to_the_list_it_is_given_and_returns_that_list() -> None:
    fold = Fold()
    out: list[Record] = []
    for topic, raw in _messages():
        assert fold.feed(topic, raw, out) is out
    assert [type(r).__name__ for r in out] == ["Rejected", "Settlement", "Settlement", "Refund"]


def test_a_replay_line_gives_the_records_of_the_same_message_read_from_its_topic() -> None:
    by_topic, by_line = Fold(), Fold()
    for topic, raw in _messages():
        assert by_line.feed(None, raw) == by_topic.feed(topic, raw)


def test_a_bet_read_from_the_rounds_topic_is_rejected_there_and_changes_nothing() -> None:
    fold = Fold()
    opened, closed, result = sicbo_round([6, 5, 1], last_seq=1)
    (rejected,) = fold.feed("rounds", bet(1)) + fold.feed("rounds", opened)
    assert isinstance(rejected, Rejected)
    assert (rejected.topic, rejected.reason) == ("rounds", "unknown_type")
    assert fold.feed("rounds", closed) + fold.feed("rounds", result) == []
    (settled,) = fold.feed("bets", bet(1))
    assert isinstance(settled, Settlement) and settled.payout == 200


def test_a_round_event_read_from_the_bets_topic_is_rejected_there() -> None:
    opened = sicbo_round([6, 5, 1], last_seq=1)[0]
    (rejected,) = Fold().feed("bets", opened)
    assert isinstance(rejected, Rejected)
    assert (rejected.topic, rejected.reason) == ("bets", "unknown_type")
