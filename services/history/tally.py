"""The read side's metrics in the Prometheus text exposition (pure: no clock, no I/O).

The projector keeps its counters in the database, moved in each batch's transaction, so every API
process over one database shows the same values, and a restart changes none of them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Final, assert_never

from services.metric import Family

if TYPE_CHECKING:
    from services.statistics.integrity import Finding, Verdict

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
INTEGRITY: Final = Family(
    "croupier_read_integrity_verdict",
    "gauge",
    "The verdict of each outcome integrity test of each table, dealer and shaker over its last "
    "2000 counted rounds (GET /integrity): 0 ok or too_few, 1 watch, 2 alarm.",
    ("scope", "id", "game", "test"),
)
FAMILIES: Final = (*COUNTERS, PENDING, LAG, DECISION_LATENCY, INTEGRITY)
"""The read side's metric families, in the order /metrics gives them."""


def _seconds(ms: int) -> str:
    """Milliseconds as a decimal number of seconds, exactly."""
    return f"{ms // 1000}.{ms % 1000:03d}"


def _label(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def labels(**given: str) -> str:
    """Labels as the exposition writes them: `{name="value",...}`, escaped."""
    return "{" + ",".join(f'{k}="{_label(v)}"' for k, v in given.items()) + "}"


def level(verdict: Verdict) -> int:
    """A verdict as the gauge's value: 0 ok or too_few, 1 watch, 2 alarm."""
    match verdict:
        case "ok" | "too_few":
            return 0
        case "watch":
            return 1
        case "alarm":
            return 2
        case _:
            assert_never(verdict)


def exposition(
    counters: Counters, *, pending: int, lag: int | None, integrity: Sequence[Finding] = ()
) -> str:
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
    lines += INTEGRITY.lines(
        (labels(scope=f.scope, id=f.id, game=f.game, test=f.test), str(level(f.verdict)))
        for f in integrity
    )
    return "\n".join(lines) + "\n"
