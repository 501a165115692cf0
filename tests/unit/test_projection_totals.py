"""The counters a batch adds for its decisions: by outcome, and the latency histogram from each
decision's `at` to its commit (worked examples)."""

from __future__ import annotations

from schemas.journal import records
from services.history import counters
from services.history.projection import Changes
from services.history.tally import LATENCY
from tests.unit.builders import refund_record, settlement_record

AT = "2026-11-01T00:00:00Z"
AT_MS = 1_793_491_200_000  # AT in milliseconds since the epoch


def settlement(n: int, result: str = "win") -> bytes:
    return settlement_record(n, result, at=AT)


def refund(n: int) -> bytes:
    return refund_record(n, at=AT)


def journal(*decisions: bytes) -> bytes:
    [record] = records([], decisions)
    return record


def test_decisions_are_counted_by_outcome_and_by_how_long_they_waited() -> None:
    changes = Changes()
    changes.feed("accepted", journal(settlement(1), settlement(2)), AT_MS + 3)  # bucket 5
    changes.feed("accepted", journal(settlement(3, "lose")), AT_MS + 40)  # bucket 50
    changes.feed("accepted", journal(refund(4)), AT_MS + 70_000)  # past 60 s: +Inf only
    changes.feed("accepted", journal(settlement(5)), AT_MS - 900)  # a clock behind reads 0
    changes.feed("accepted", journal(settlement(1)), AT_MS + 9_999)  # read again: counted once
    totals = counters.of_batch(changes)
    decisions = {
        labels: n for (name, labels), n in totals.items() if name == "croupier_read_decisions_total"
    }
    assert decisions == {
        '{kind="settlement",outcome="win"}': 3,
        '{kind="settlement",outcome="lose"}': 1,
        '{kind="refund",outcome="round_cancelled"}': 1,
    }
    buckets = {le: n for (name, le), n in totals.items() if name == f"{LATENCY}_bucket"}
    assert buckets == {"5": 3, "50": 1, "+Inf": 1}
    assert totals[(f"{LATENCY}_sum", "")] == 3 + 3 + 40 + 70_000 + 0
    assert totals[(f"{LATENCY}_count", "")] == 5
    assert totals[("croupier_read_events_total", '{topic="accepted"}')] == 5
    assert changes.size == 6
    assert changes.read == {"accepted": 5}
