"""The projector's counters as the `counters` table keeps them: metric names and rendered labels.

The shell's side of the projection: the projection counts plain facts (messages by topic, skipped
ones, rejections by reason, adjustments by cause, decisions by outcome and wait), and here they
are named as the Prometheus exposition shows them (`tally.exposition`), in the batch's
transaction (`store`).
"""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter
from typing import Final

from services.history.projection import Changes
from services.history.tally import LATENCY, LATENCY_BUCKETS_MS, labels

CounterKey = tuple[str, str]
"""A counter's metric name and its labels, rendered as in the Prometheus exposition."""
EVENTS: Final = "croupier_read_events_total"
UNREADABLE: Final = "croupier_read_unreadable_total"
DECISIONS: Final = "croupier_read_decisions_total"
REJECTIONS: Final = "croupier_read_rejections_total"
_BUCKETS: Final = tuple(
    (f"{LATENCY}_bucket", str(bound)) for bound in (*LATENCY_BUCKETS_MS, "+Inf")
)
_LATENCY_SUM: Final = (f"{LATENCY}_sum", "")
_LATENCY_COUNT: Final = (f"{LATENCY}_count", "")


def of_batch(changes: Changes) -> Counter[CounterKey]:
    """Every counter a batch adds: its messages, and its decisions by outcome and latency."""
    counts: Counter[CounterKey] = Counter()
    for source, n in changes.read.items():
        counts[(EVENTS, labels(topic=source))] += n
    for source, n in changes.skipped.items():
        counts[(UNREADABLE, labels(topic=source))] += n
    for reason, n in changes.rejections.items():
        counts[(REJECTIONS, labels(reason=reason))] += n
    for cause, n in changes.causes.items():
        counts[(DECISIONS, labels(kind="adjustment", outcome=cause))] += n
    by_outcome: Counter[tuple[str, str]] = Counter()
    for (outcome, settled, waited, *_), (n, _, _) in changes.sums.decided.items():
        by_outcome[("settlement" if settled else "refund", outcome)] += n
        counts[_BUCKETS[bisect_left(LATENCY_BUCKETS_MS, waited)]] += n
        counts[_LATENCY_SUM] += waited * n
        counts[_LATENCY_COUNT] += n
    for (kind, outcome), n in by_outcome.items():
        counts[(DECISIONS, labels(kind=kind, outcome=outcome))] += n
    return counts
