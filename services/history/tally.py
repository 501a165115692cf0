"""The read side's metrics in the Prometheus text exposition (pure: no clock, no I/O).

The projector keeps its counters in the database, moved in each batch's transaction, so every API
process over one database shows the same values, and a restart changes none of them.
"""

from __future__ import annotations

from typing import Final

from services.metric import Family

LATENCY_BUCKETS_MS: Final = (5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000, 60000)
LATENCY: Final = "croupier_read_decision_latency_seconds"
Counters = dict[tuple[str, str], int]
"""Counter values by metric name and rendered labels (e.g. `{topic="accepted"}`)."""

COUNTERS: Final = (
    Family(
        "croupier_read_events_total",
        "counter",
        "Messages the projector consumed, by topic.",
        ("topic",),
    ),
    Family(
        "croupier_read_unreadable_total",
        "counter",
        "Messages the projector could not decode and skipped, by topic.",
        ("topic",),
    ),
    Family(
        "croupier_read_decisions_total",
        "counter",
        "Distinct bet decisions read from the workers' journals, by kind and outcome.",
        ("kind", "outcome"),
    ),
    Family(
        "croupier_read_rejections_total",
        "counter",
        "Records read from the rejected topic, by reason.",
        ("reason",),
    ),
)
"""The projector's counters, kept in the database."""
PENDING: Final = Family(
    "croupier_read_pending_bets", "gauge", "Confirmed bets with no settlement or refund yet."
)
LAG: Final = Family("croupier_read_lag_messages", "gauge", "Committed messages not projected yet.")
"""Absent from /metrics while the projected topics' positions are not known."""
DECISION_LATENCY: Final = Family(
    LATENCY,
    "histogram",
    "Time from the at of the round event that decided each bet (its result or cancellation, "
    "by the table's clock) to the Kafka timestamp of the bet's settlement or refund; 0 when "
    "the table's clock is ahead.",
    ("le",),
)
FAMILIES: Final = (*COUNTERS, PENDING, LAG, DECISION_LATENCY)
"""The read side's metric families, in the order /metrics gives them."""


def _seconds(ms: int) -> str:
    """Milliseconds as a decimal number of seconds, exactly."""
    return f"{ms // 1000}.{ms % 1000:03d}"


def exposition(counters: Counters, *, pending: int, lag: int | None) -> str:
    """The Prometheus text format (version 0.0.4) of the read side's metrics."""
    lines: list[str] = []
    for family in COUNTERS:
        name = family.name
        samples = sorted((labels, str(v)) for (n, labels), v in counters.items() if n == name)
        lines += family.lines(samples)
    lines += PENDING.lines([("", str(pending))])
    if lag is not None:
        lines += LAG.lines([("", str(lag))])
    running = 0
    buckets: list[tuple[str, str]] = []
    for bound in LATENCY_BUCKETS_MS:
        running += counters.get((f"{LATENCY}_bucket", str(bound)), 0)
        buckets.append((f'_bucket{{le="{_seconds(bound)}"}}', str(running)))
    count = counters.get((f"{LATENCY}_count", ""), 0)
    buckets.append(('_bucket{le="+Inf"}', str(count)))
    lines += [
        *DECISION_LATENCY.header(),
        *(f"{LATENCY}{suffix} {value}" for suffix, value in buckets),
        f"{LATENCY}_sum {_seconds(counters.get((f'{LATENCY}_sum', ''), 0))}",
        f"{LATENCY}_count {count}",
    ]
    return "\n".join(lines) + "\n"
