"""`croupier verify`: the auditor's check that a cluster's committed output is exactly the fold's.

It reads `rounds` and `bets` from the beginning and folds them offline (every round event of a
table, then its bets: an interleaving the contract allows, so the set of records is the one any
processor must write), reads the four output topics with read_committed, and compares (compare.py).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Annotated, Final

import msgspec

from schemas.records import Record, Rejected
from services.audit.compare import Outputs, Report, compare, outputs
from services.audit.pending import PendingBet, pending
from services.audit.reader import read_topic
from services.settings import Settings
from services.settlement.fold import Fold

Progress = Callable[[str], Callable[[int, int], None]]
"""Given a topic name, the callback `read_topic` reports (done, total) messages to."""


class _Stamp(msgspec.Struct, kw_only=True):
    at: Annotated[datetime, msgspec.Meta(tz=True)] | None = None


_STAMP: Final = msgspec.json.Decoder(_Stamp)


class Audit(msgspec.Struct, frozen=True, kw_only=True):
    """What one verification read, found and took."""

    bootstrap: str
    events_in: int
    report: Report
    pending: list[PendingBet]
    newest_at: str | None
    seconds: float

    @property
    def ok(self) -> bool:
        """Whether the committed output agrees with the fold (pending bets are no failure)."""
        return self.report.ok


def audit(
    settings: Settings,
    *,
    progress: Progress | None = None,
    now: datetime | None = None,
    timeout: float = 900.0,
) -> Audit:
    """Fold the inputs, read the committed outputs, and compare them."""
    started = time.monotonic()
    s = settings

    def read(topic: str) -> list[tuple[bytes | None, bytes]]:
        report = progress(topic) if progress is not None else None
        messages = read_topic(s.kafka_bootstrap, topic, timeout=timeout, progress=report)
        return [(m.key, m.value) for m in messages]

    fold = Fold(horizon=s.horizon)
    records: list[Record] = []
    newest: datetime | None = None
    events = 0
    for kind, topic in (("rounds", s.topic_rounds), ("bets", s.topic_bets)):
        for _, raw in read(topic):
            events += 1
            out = fold.feed(kind, raw)
            records.extend(out)
            if not any(isinstance(r, Rejected) for r in out):
                at = _at(raw)
                if at is not None and (newest is None or at > newest):
                    newest = at
    boards = [b for t in fold.tables if (b := fold.stats(t)) is not None]
    expected = outputs(records, boards)
    found = Outputs(
        settlements=[raw for _, raw in read(s.topic_settlements)],
        refunds=[raw for _, raw in read(s.topic_refunds)],
        adjustments=[raw for _, raw in read(s.topic_adjustments)],
        rejected=[raw for _, raw in read(s.topic_rejected)],
        table_stats={_key(key): raw for key, raw in read(s.topic_table_stats)},
    )
    return Audit(
        bootstrap=s.kafka_bootstrap,
        events_in=events,
        report=compare(expected, found),
        pending=pending(fold.waiting(), newest, now or datetime.now(UTC)),
        newest_at=None if newest is None else newest.isoformat(),
        seconds=round(time.monotonic() - started, 3),
    )


def _at(raw: bytes) -> datetime | None:
    try:
        return _STAMP.decode(raw).at
    except msgspec.DecodeError:
        return None


def _key(key: bytes | None) -> str:
    return "<no key>" if key is None else key.decode("utf-8", errors="backslashreplace")
