"""Counters of the read side and their Prometheus text exposition (pure: no clock, no I/O)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Final

LATENCY_BUCKETS_MS: Final = (5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000, 60000)


@dataclass
class Histogram:
    """Observations in whole milliseconds, counted per upper bound (cumulative on output)."""

    bounds: tuple[int, ...] = LATENCY_BUCKETS_MS
    counts: list[int] = field(default_factory=lambda: [0] * (len(LATENCY_BUCKETS_MS) + 1))
    total_ms: int = 0
    count: int = 0

    def observe(self, ms: int) -> None:
        ms = max(0, ms)
        index = next((i for i, bound in enumerate(self.bounds) if ms <= bound), len(self.bounds))
        self.counts[index] += 1
        self.total_ms += ms
        self.count += 1


@dataclass
class Tally:
    """What the read side consumed and what it saw decided, as monotonic counters."""

    events_in: Counter[str] = field(default_factory=Counter)
    unreadable: Counter[str] = field(default_factory=Counter)
    decisions: Counter[tuple[str, str]] = field(default_factory=Counter)
    rejections: Counter[str] = field(default_factory=Counter)
    latency: Histogram = field(default_factory=Histogram)


def _seconds(ms: int) -> str:
    """Milliseconds as a decimal number of seconds, exactly."""
    return f"{ms // 1000}.{ms % 1000:03d}"


def _label(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _family(name: str, kind: str, help_: str, samples: list[tuple[str, str]]) -> list[str]:
    lines = [f"# HELP {name} {help_}", f"# TYPE {name} {kind}"]
    lines += [f"{name}{labels} {value}" for labels, value in samples]
    return lines


def exposition(tally: Tally, *, pending: int, lag: int | None) -> str:
    """The Prometheus text format (version 0.0.4) of the read side's metrics."""
    p = "croupier_read"
    lines = _family(
        f"{p}_events_total",
        "counter",
        "Messages the read side consumed, by topic.",
        [(f'{{topic="{_label(t)}"}}', str(n)) for t, n in sorted(tally.events_in.items())],
    )
    lines += _family(
        f"{p}_unreadable_total",
        "counter",
        "Messages the read side could not decode and skipped, by topic.",
        [(f'{{topic="{_label(t)}"}}', str(n)) for t, n in sorted(tally.unreadable.items())],
    )
    lines += _family(
        f"{p}_decisions_total",
        "counter",
        "Distinct bet decisions read from settlements and refunds, by kind and outcome.",
        [
            (f'{{kind="{kind}",outcome="{_label(outcome)}"}}', str(n))
            for (kind, outcome), n in sorted(tally.decisions.items())
        ],
    )
    lines += _family(
        f"{p}_rejections_total",
        "counter",
        "Records read from the rejected topic, by reason.",
        [(f'{{reason="{_label(r)}"}}', str(n)) for r, n in sorted(tally.rejections.items())],
    )
    lines += _family(
        f"{p}_pending_bets",
        "gauge",
        "Confirmed bets with no settlement or refund yet.",
        [("", str(pending))],
    )
    if lag is not None:
        lines += _family(
            f"{p}_lag_messages", "gauge", "Committed messages not read yet.", [("", str(lag))]
        )
    h = tally.latency
    name = f"{p}_decision_latency_seconds"
    buckets: list[tuple[str, str]] = []
    running = 0
    for bound, n in zip(h.bounds, h.counts, strict=False):
        running += n
        buckets.append((f'_bucket{{le="{_seconds(bound)}"}}', str(running)))
    buckets.append(('_bucket{le="+Inf"}', str(h.count)))
    lines += [
        f"# HELP {name} Time from a round's result (or cancellation) to each decision of its "
        "bets, between the Kafka timestamps of the two records.",
        f"# TYPE {name} histogram",
        *(f"{name}{suffix} {value}" for suffix, value in buckets),
        f"{name}_sum {_seconds(h.total_ms)}",
        f"{name}_count {h.count}",
    ]
    return "\n".join(lines) + "\n"
