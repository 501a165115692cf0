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

    def committed(self, *, messages_out: int, seconds: float) -> None:
        self.transactions += 1
        self.records_out += messages_out
        self.commit_seconds += seconds
