"""Counters the engine keeps for /metrics and the live view (no I/O)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field


@dataclass
class Metrics:
    """What went in, what came out, and how long commits took."""

    events_in: Counter[str] = field(default_factory=Counter)
    decisions: Counter[str] = field(default_factory=Counter)
    rejections: Counter[str] = field(default_factory=Counter)
    pending: dict[int, int] = field(default_factory=dict)
    transactions: int = 0
    records_out: int = 0
    commit_seconds: float = 0.0
    blocked: int = 0
    state_records: int = 0
    state_bytes: int = 0

    def committed(self, *, messages_out: int, seconds: float) -> None:
        self.transactions += 1
        self.records_out += messages_out
        self.commit_seconds += seconds

    def state_written(self, entries: list[tuple[bytes, bytes | None]]) -> None:
        self.state_records += len(entries)
        self.state_bytes += sum(len(key) + len(value or b"") for key, value in entries)


def render(m: Metrics, tasks: int, blocked: int) -> str:
    """The worker's metrics in the Prometheus text format."""
    lines = [
        "# HELP croupier_tasks Tasks (input partitions) this worker runs.",
        "# TYPE croupier_tasks gauge",
        f"croupier_tasks {tasks}",
        "# HELP croupier_tasks_blocked Tasks assigned here that refuse to run (see /health).",
        "# TYPE croupier_tasks_blocked gauge",
        f"croupier_tasks_blocked {blocked}",
        "# HELP croupier_pending_bets Bets read and waiting for their round's fate.",
        "# TYPE croupier_pending_bets gauge",
        f"croupier_pending_bets {sum(m.pending.values())}",
        "# HELP croupier_transactions_total Transactions committed.",
        "# TYPE croupier_transactions_total counter",
        f"croupier_transactions_total {m.transactions}",
        "# HELP croupier_records_out_total Records committed (outputs, accepted, state).",
        "# TYPE croupier_records_out_total counter",
        f"croupier_records_out_total {m.records_out}",
        "# HELP croupier_commit_seconds_total Time spent folding and committing batches.",
        "# TYPE croupier_commit_seconds_total counter",
        f"croupier_commit_seconds_total {m.commit_seconds:.6f}",
        "# HELP croupier_state_records_total State changelog records written.",
        "# TYPE croupier_state_records_total counter",
        f"croupier_state_records_total {m.state_records}",
        "# HELP croupier_state_bytes_total State changelog bytes written.",
        "# TYPE croupier_state_bytes_total counter",
        f"croupier_state_bytes_total {m.state_bytes}",
        "# HELP croupier_events_in_total Input events read, by topic.",
        "# TYPE croupier_events_in_total counter",
        *(f'croupier_events_in_total{{topic="{t}"}} {n}' for t, n in sorted(m.events_in.items())),
        "# HELP croupier_decisions_total Settlements and refunds, by kind.",
        "# TYPE croupier_decisions_total counter",
        *(f'croupier_decisions_total{{kind="{k}"}} {n}' for k, n in sorted(m.decisions.items())),
        "# HELP croupier_rejections_total Inputs rejected, by reason.",
        "# TYPE croupier_rejections_total counter",
        *(
            f'croupier_rejections_total{{reason="{r}"}} {n}'
            for r, n in sorted(m.rejections.items())
        ),
    ]
    return "\n".join(lines) + "\n"
