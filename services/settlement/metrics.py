"""Counters the engine keeps for /metrics and the live view (no I/O)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Final

from services.collector import Collections
from services.metric import Family

PARTS: Final = ("read", "fold", "produce", "wait")
"""The loop's parts: reading a batch from the consumer, folding it, handing its transaction to
the producer, and waiting for the previous transaction's commit. Much time waiting says the
brokers hold the worker back; little, that its processor does (docs/OPERATIONS.md)."""


@dataclass
class Metrics:
    """What went in, what came out, and how long commits took."""

    events_in: Counter[str] = field(default_factory=Counter)
    decisions: Counter[str] = field(default_factory=Counter)
    rejections: Counter[str] = field(default_factory=Counter)
    misrouted: Counter[tuple[str, int]] = field(default_factory=Counter)
    """Inputs forwarded to their table's partition, by topic and the partition they were read
    from (docs/CONTRACT.md, section 1a)."""
    pending: dict[int, int] = field(default_factory=dict)
    transactions: int = 0
    records_out: int = 0
    commit_seconds: float = 0.0
    blocked: int = 0
    state_records: int = 0
    state_bytes: int = 0
    loop_seconds: dict[str, float] = field(default_factory=lambda: dict.fromkeys(PARTS, 0.0))
    """Where the consume-fold-produce loop spent its time, by part (PARTS)."""
    collections: Collections = field(default_factory=Collections)
    """The cyclic collector's runs, on a clock (`collector.clocked`)."""

    def committed(self, *, messages_out: int, seconds: float) -> None:
        self.transactions += 1
        self.records_out += messages_out
        self.commit_seconds += seconds

    def state_written(self, entries: list[tuple[bytes, bytes | None]]) -> None:
        self.state_records += len(entries)
        self.state_bytes += sum(len(key) + len(value or b"") for key, value in entries)


FAMILIES: Final = (
    Family("croupier_tasks", "gauge", "Tasks (input partitions) this worker runs."),
    Family(
        "croupier_tasks_blocked", "gauge", "Tasks assigned here that refuse to run (see /health)."
    ),
    Family("croupier_pending_bets", "gauge", "Bets read and waiting for their round's fate."),
    Family("croupier_transactions_total", "counter", "Transactions committed."),
    Family(
        "croupier_records_out_total", "counter", "Records committed (outputs, accepted, state)."
    ),
    Family(
        "croupier_commit_seconds_total", "counter", "Time spent folding and committing batches."
    ),
    Family("croupier_state_records_total", "counter", "State changelog records written."),
    Family("croupier_state_bytes_total", "counter", "State changelog bytes written."),
    Family(
        "croupier_loop_seconds_total",
        "counter",
        "Time the consume-fold-produce loop spent, by part (read: idle time too, fold, produce, "
        "wait: for the previous transaction's commit).",
        ("part",),
    ),
    Family(
        "croupier_gc_collections_total",
        "counter",
        "Full collections of cyclic garbage, run on a clock (automatic collection is off).",
    ),
    Family("croupier_gc_seconds_total", "counter", "Time the full collections took."),
    Family("croupier_events_in_total", "counter", "Input events read, by topic.", ("topic",)),
    Family(
        "croupier_decisions_total",
        "counter",
        "Settlements, refunds and adjustments written, by kind (settlement, refund:<reason>, "
        "adjustment:<cause>).",
        ("kind",),
    ),
    Family("croupier_rejections_total", "counter", "Inputs rejected, by reason.", ("reason",)),
    Family(
        "croupier_misrouted_total",
        "counter",
        "Inputs read from a partition other than their table's and forwarded there, by topic and "
        "the partition they were read from (their producer's partitioner is not Kafka's murmur2).",
        ("topic", "partition"),
    ),
)
"""The worker's metric families, in the order /metrics gives them."""


def _by(label: str, counts: Counter[str]) -> list[tuple[str, str]]:
    return [(f'{{{label}="{value}"}}', str(n)) for value, n in sorted(counts.items())]


def render(m: Metrics, tasks: int, blocked: int) -> str:
    """The worker's metrics in the Prometheus text format."""
    samples = (
        [("", str(tasks))],
        [("", str(blocked))],
        [("", str(sum(m.pending.values())))],
        [("", str(m.transactions))],
        [("", str(m.records_out))],
        [("", f"{m.commit_seconds:.6f}")],
        [("", str(m.state_records))],
        [("", str(m.state_bytes))],
        [(f'{{part="{part}"}}', f"{m.loop_seconds[part]:.6f}") for part in PARTS],
        [("", str(m.collections.runs))],
        [("", f"{m.collections.seconds:.6f}")],
        _by("topic", m.events_in),
        _by("kind", m.decisions),
        _by("reason", m.rejections),
        [
            (f'{{topic="{topic}",partition="{p}"}}', str(n))
            for (topic, p), n in sorted(m.misrouted.items())
        ],
    )
    lines: list[str] = []
    for family, values in zip(FAMILIES, samples, strict=True):
        lines += family.lines(values)
    return "\n".join(lines) + "\n"
