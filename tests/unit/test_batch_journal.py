"""A task's part of a batch: the journal carries the inputs the fold accepted, verbatim, then
every settlement, refund and adjustment of the batch, byte for byte as on their own topics and in
the same order; rejections and boards are on their topics only."""

from __future__ import annotations

from schemas.journal import records as journal_records
from services.settlement import batch
from services.settlement.metrics import Metrics
from services.settlement.misrouted import Homes
from tests.messages import Message
from tests.unit.builders import bet, round_event
from tests.unit.test_misrouted import TOPICS, _inputs, _table_on, _task


def test_the_journal_holds_the_accepted_inputs_then_the_decisions_as_written() -> None:
    table = _table_on(0, 2)
    key = table.encode()
    inputs = [
        Message("rounds", 0, 0, round_event("opened", "R1", table, game="sicbo"), key),
        Message("rounds", 0, 1, round_event("betting_closed", "R1", table, last_seq=2), key),
        Message("rounds", 0, 2, round_event("result", "R1", table, dice=[1, 2, 3]), key),
        Message("bets", 0, 0, bet(1, "big", table_id=table), key),
        Message("bets", 0, 1, bet(2, "small", table_id=table), key),
        Message("bets", 0, 2, b"not json", key),
        Message("bets", 0, 3, bet(3, "big", table_id=table), key),  # late: refunded
    ]
    out = batch.fold(_task(0), _inputs(inputs), TOPICS, Metrics(), False, Homes(2))

    journals = [value for topic, _, _, value, _ in out if topic == "accepted"]
    accepted = [m.value() or b"" for m in inputs if m.value() != b"not json"]
    decisions = [
        v or b"" for t, _, _, v, _ in out if t in ("settlements", "refunds", "adjustments")
    ]
    assert [t for t, *_ in out if t in ("settlements", "refunds", "rejected")] == [
        "settlements",
        "settlements",
        "rejected",
        "refunds",
    ]
    assert journals == journal_records(accepted, decisions)
