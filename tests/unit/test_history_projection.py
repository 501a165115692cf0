"""The read side's projection by worked examples: what players and recalls see."""

from __future__ import annotations

from schemas.codec import encode
from schemas.records import Record, Refund, Rejected, Settlement, TableStats
from services.history.models import bet_out, round_out
from services.history.projection import Projection, Source
from services.settlement.fold import Fold
from tests.unit.builders import bet, round_event, sicbo_round

RESULT_AT = "2026-11-29T12:01:00Z"


def decided(*messages: tuple[str, bytes]) -> list[tuple[Source, bytes]]:
    """What croupier commits for these inputs: each record on its output topic."""
    fold = Fold()
    topics: dict[type[Record], Source] = {
        Settlement: "settlements",
        Refund: "refunds",
        Rejected: "rejected",
        TableStats: "table-stats",
    }
    out: list[tuple[Source, bytes]] = []
    for topic, raw in messages:
        out += [(topics[type(r)], encode(r)) for r in fold.feed(topic, raw)]
    return out


def project(*messages: tuple[Source, bytes], projection: Projection | None = None) -> Projection:
    projection = projection or Projection()
    for source, raw in messages:
        projection.feed(source, raw)
    return projection


def view(projection: Projection, bet_id: str) -> dict[str, object]:
    b = projection.bets[bet_id]
    return bet_out(b, projection.round(b.table_id, b.round_id)).model_dump()


def test_a_bet_is_pending_until_its_settlement_is_committed() -> None:
    opened, closed, result = sicbo_round([4, 5, 6], last_seq=1)
    big = bet(1, "big", stake=100)
    p = project(("rounds", opened), ("bets", big), ("rounds", closed), ("rounds", result))
    assert view(p, "T1-R1-1")["status"] == "pending"
    assert p.pending == 1
    project(
        *decided(("rounds", opened), ("bets", big), ("rounds", closed), ("rounds", result)),
        projection=p,
    )
    seen = view(p, "T1-R1-1")
    assert (seen["status"], seen["result"], seen["payout"], seen["stake"]) == (
        "settled",
        "win",
        200,
        100,
    )
    assert (seen["dice"], seen["round_status"], seen["decided_at"]) == (
        [4, 5, 6],
        "result",
        RESULT_AT,
    )
    assert p.pending == 0


def test_a_settlement_read_before_its_bet_stays_settled_when_the_bet_arrives() -> None:
    opened, closed, result = sicbo_round([1, 1, 2], last_seq=1)
    small = bet(1, "small", stake=50, player_id="bob")
    inputs = [("rounds", opened), ("rounds", closed), ("rounds", result), ("bets", small)]
    p = project(*decided(*inputs))
    assert view(p, "T1-R1-1")["status"] == "settled"
    assert view(p, "T1-R1-1")["seq"] is None
    project(*inputs, projection=p)
    seen = view(p, "T1-R1-1")
    assert (seen["status"], seen["payout"], seen["seq"], seen["kind"]) == (
        "settled",
        100,
        1,
        "small",
    )
    assert p.pending == 0


def test_reading_every_message_twice_changes_no_view() -> None:
    opened, closed, result = sicbo_round([2, 2, 2], last_seq=2)
    inputs = [
        ("rounds", opened),
        ("bets", bet(1, "triple", [2])),
        ("bets", bet(2, "big")),
        ("rounds", closed),
        ("rounds", result),
    ]
    messages = [*inputs, *decided(*inputs)]
    once = project(*messages)
    twice = project(*[m for m in messages for _ in range(2)])
    rnd_once, rnd_twice = once.round("T1", "R1"), twice.round("T1", "R1")
    assert rnd_once is not None and rnd_twice is not None
    assert round_out(twice, rnd_twice) == round_out(once, rnd_once)
    assert twice.players == once.players and twice.pending == once.pending == 0
    assert twice.tally.decisions == once.tally.decisions


def test_a_conflicting_duplicate_and_a_reused_seq_leave_only_the_first_bet() -> None:
    opened, closed, _ = sicbo_round([3, 3, 4], last_seq=1)
    first = bet(1, "big", stake=100)
    conflict = bet(1, "big", stake=999, event_id="again")
    reused_seq = bet(1, "small", bet_id="other", event_id="other")
    p = project(
        ("rounds", opened),
        ("bets", first),
        ("bets", conflict),
        ("bets", reused_seq),
        ("rounds", closed),
    )
    assert list(p.bets) == ["T1-R1-1"]
    assert view(p, "T1-R1-1")["stake"] == 100
    assert p.pending == 1


def test_round_recall_keeps_accepted_events_only_and_their_details() -> None:
    opened, closed, result = sicbo_round([6, 5, 1], last_seq=0)
    suspended = round_event("suspended", reason="dealer called the supervisor")
    resumed = round_event("resumed")
    early_result = round_event("result", dice=[1, 1, 1], event_id="too-early")
    reshaken = round_event("reshaken", reason="dice not flat")
    p = project(
        ("rounds", opened),
        ("rounds", early_result),
        ("rounds", suspended),
        ("rounds", resumed),
        ("rounds", opened),
        ("rounds", closed),
        ("rounds", reshaken),
        ("rounds", result),
    )
    rnd = p.round("T1", "R1")
    assert rnd is not None
    recall = round_out(p, rnd)
    assert [s.type for s in recall.timeline] == [
        "round.opened",
        "round.suspended",
        "round.resumed",
        "round.betting_closed",
        "round.reshaken",
        "round.result",
    ]
    assert recall.timeline[0].game == "sicbo" and recall.timeline[3].last_seq == 0
    assert recall.timeline[1].reason == "dealer called the supervisor"
    assert (recall.status, recall.dice, recall.reshakes, recall.suspended) == (
        "result",
        [6, 5, 1],
        1,
        False,
    )


def test_round_totals_add_up_stakes_payouts_ggr_and_refunds_per_currency() -> None:
    opened, closed, result = sicbo_round([4, 5, 6], last_seq=2)
    inputs = [
        ("rounds", opened),
        ("bets", bet(1, "big", stake=100, player_id="ann")),  # 4+5+6 = 15: big wins 1:1, pays 200
        ("bets", bet(2, "small", stake=50, player_id="bob")),  # small loses, pays 0
        (
            "bets",
            bet(3, "big", stake=30, currency="USD", player_id="cid"),
        ),  # seq 3 > last_seq: late
        ("rounds", closed),
        ("rounds", result),
    ]
    p = project(*inputs, *decided(*inputs))
    rnd = p.round("T1", "R1")
    assert rnd is not None
    totals = {t.currency: t for t in round_out(p, rnd).totals}
    eur, usd = totals["EUR"], totals["USD"]
    assert (eur.bets, eur.settled, eur.stakes, eur.payouts, eur.ggr, eur.refunds) == (
        2,
        2,
        150,
        200,
        -50,
        0,
    )
    assert (usd.bets, usd.refunded, usd.stakes, usd.refunds, usd.ggr) == (1, 1, 0, 30, 0)
    assert view(p, "T1-R1-3")["refund_reason"] == "late_bet"


def test_a_cancelled_round_refunds_every_bet_and_has_no_outcome() -> None:
    opened = round_event("opened", game="xocdia")
    cancelled = round_event("cancelled", reason="discs dropped")
    inputs = [("rounds", opened), ("bets", bet(1, "odd", stake=70)), ("rounds", cancelled)]
    p = project(*inputs, *decided(*inputs))
    seen = view(p, "T1-R1-1")
    assert (seen["status"], seen["refund_reason"], seen["dice"], seen["discs"]) == (
        "refunded",
        "round_cancelled",
        None,
        None,
    )
    rnd = p.round("T1", "R1")
    assert rnd is not None and (rnd.phase, rnd.cancel_reason) == ("cancelled", "discs dropped")


def test_the_board_is_the_last_table_stats_record_read() -> None:
    first = sicbo_round([1, 2, 3], last_seq=0, round_id="R1")
    second = sicbo_round([6, 6, 6], last_seq=0, round_id="R2")
    fold = Fold()  # what the engine writes to table-stats after each batch that changed a board
    written = []
    for raw in first + second:
        fold.feed("rounds", raw)
        stats = fold.stats("T1")
        if stats is not None and fold.boards_changed:
            written.append(encode(stats))
            fold.boards_changed.clear()
    p = project(*[("table-stats", raw) for raw in written])
    board = p.boards["T1"]
    assert [r.round_id for r in board.rounds] == ["R2", "R1"]
    assert board.counts["triple"] == 1 and board.counts["small"] == 1


def test_decision_latency_is_measured_between_kafka_timestamps() -> None:
    opened, closed, result = sicbo_round([4, 5, 6], last_seq=2)
    inputs = [
        ("rounds", opened),
        ("bets", bet(1, "big")),
        ("bets", bet(2, "odd")),
        ("rounds", closed),
    ]
    (first, second) = [
        raw for source, raw in decided(*inputs, ("rounds", result)) if source == "settlements"
    ]
    p = project(*inputs)
    p.feed("settlements", first, timestamp_ms=10_040)  # read before the result: waits for it
    p.feed("rounds", result, timestamp_ms=10_000)
    p.feed("settlements", second, timestamp_ms=10_300)
    p.feed("settlements", second, timestamp_ms=10_900)  # the same record again: not observed twice
    latency = p.tally.latency
    assert (latency.count, latency.total_ms) == (2, 340)
    assert (
        latency.counts[latency.bounds.index(50)] == 1
        and latency.counts[latency.bounds.index(500)] == 1
    )


def test_a_history_lists_a_players_bets_newest_first() -> None:
    opened = round_event("opened", game="sicbo")
    early = bet(1, "big", at="2026-11-29T12:00:01Z")
    late = bet(2, "small", at="2026-11-29T12:00:09.5+00:00")
    middle = bet(3, "odd", at="2026-11-29T13:00:05+01:00")  # 12:00:05 UTC
    other = bet(4, "even", player_id="bob")
    p = project(
        ("rounds", opened), ("bets", early), ("bets", late), ("bets", middle), ("bets", other)
    )
    keys = p.history("alice")
    assert keys is not None
    assert [key[-1] for key in reversed(keys)] == ["T1-R1-2", "T1-R1-3", "T1-R1-1"]
    assert p.history("carol") is None


def test_unreadable_records_are_counted_and_change_nothing() -> None:
    p = project(
        ("settlements", b"not json"),
        ("table-stats", b'{"type": "table_stats"}'),
        ("refunds", b"[]"),
    )
    assert p.bets == {} and p.boards == {}
    assert p.tally.unreadable == {"settlements": 1, "table-stats": 1, "refunds": 1}
