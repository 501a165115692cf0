"""`croupier verify`: the auditor's check that a cluster's committed output is exactly the fold's.

It reads `rounds` and `bets` from the beginning and folds them offline (every round event of a
table, then its bets: an interleaving the contract allows, so the set of records is the one any
processor must write), reads the four output topics with read_committed, and compares (compare.py).
Where retention removed the head of a partition, it says which window it read and judges only
what that window holds entirely (window.py); the rest is counted as not checkable.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime

import msgspec

from services.audit.compare import Outputs, Report
from services.audit.judge import judge
from services.audit.pending import PendingBet, pending
from services.audit.reader import Message, log_starts, read_topic
from services.audit.window import Kept, Kind, Span
from services.security.login import check
from services.settings import Settings
from services.signing.keys import load as load_keys

Progress = Callable[[str], Callable[[int, int], None]]
"""Given a topic name, the callback `read_topic` reports (done, total) messages to."""


class Window(msgspec.Struct, frozen=True, kw_only=True):
    """Where each partition read began and ended: the inputs, and the outputs."""

    inputs: list[Span] = []
    outputs: list[Span] = []

    @property
    def whole(self) -> bool:
        """Whether every input partition still starts at offset 0 (the whole history)."""
        return not any(s.cut for s in self.inputs)


class Audit(msgspec.Struct, frozen=True, kw_only=True):
    """What one verification read, found and took."""

    bootstrap: str
    events_in: int
    report: Report
    pending: list[PendingBet]
    newest_at: str | None
    seconds: float
    window: Window = Window()
    pending_unchecked: int = 0
    """Bets waiting in the window whose round cannot be checked (perhaps decided before it)."""

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
    check(s)
    keys = load_keys(s.table_keys_file)  # before the long read: a bad file fails at once

    def read(topic: str) -> tuple[list[Message], list[Span]]:
        report = progress(topic) if progress is not None else None
        messages = list(read_topic(s, topic, timeout=timeout, progress=report))
        return _window(topic, messages, log_starts(s, topic))

    kept: list[Kept] = []
    inputs: list[Span] = []
    spans: dict[str, list[Span]] = {}
    sources: tuple[tuple[Kind, str], ...] = (("rounds", s.topic_rounds), ("bets", s.topic_bets))
    for kind, topic in sources:
        messages, spans[kind] = read(topic)
        inputs.extend(spans[kind])
        kept.extend(
            Kept(kind=kind, partition=m.partition, offset=m.offset, value=m.value) for m in messages
        )
    out_spans: dict[str, list[Span]] = {}
    found_by_role: dict[str, list[Message]] = {}
    for role, topic in (
        ("settlements", s.topic_settlements),
        ("refunds", s.topic_refunds),
        ("adjustments", s.topic_adjustments),
        ("rejected", s.topic_rejected),
        ("table-stats", s.topic_table_stats),
    ):
        report = progress(topic) if progress is not None else None
        found_by_role[role] = list(read_topic(s, topic, timeout=timeout, progress=report))
        out_spans[role] = _spans(topic, found_by_role[role], log_starts(s, topic))
    found = Outputs(
        settlements=[m.value for m in found_by_role["settlements"]],
        refunds=[m.value for m in found_by_role["refunds"]],
        adjustments=[m.value for m in found_by_role["adjustments"]],
        rejected=[m.value for m in found_by_role["rejected"]],
        rejected_keys=[m.key for m in found_by_role["rejected"]],
        table_stats={_key(m.key): m.value for m in found_by_role["table-stats"]},
    )
    judged = judge(kept, {**spans, **out_spans}, found, s.horizon, keys)
    newest = judged.newest
    return Audit(
        bootstrap=s.kafka_bootstrap,
        events_in=judged.events,
        report=judged.report,
        pending=pending(judged.waiting, newest, now or datetime.now(UTC)),
        newest_at=None if newest is None else newest.isoformat(),
        seconds=round(time.monotonic() - started, 3),
        window=Window(inputs=inputs, outputs=[x for v in out_spans.values() for x in v]),
        pending_unchecked=judged.waiting_unchecked,
    )


def _window(
    topic: str, messages: list[Message], starts: dict[int, tuple[int, int]]
) -> tuple[list[Message], list[Span]]:
    """The messages at or after each partition's log start as it stands after the read.

    The log start only moves forward, so every message from it on was read: the window is a
    whole suffix of each partition (a message read below it may have lost its neighbours to
    retention during the read, so it is left out).
    """
    kept = [m for m in messages if m.offset >= starts.get(m.partition, (0, 0))[0]]
    return kept, _spans(topic, kept, starts)


def _spans(topic: str, messages: list[Message], starts: dict[int, tuple[int, int]]) -> list[Span]:
    first: dict[int, Message] = {}
    for m in messages:
        if m.partition not in first or m.offset < first[m.partition].offset:
            first[m.partition] = m
    spans = []
    for p, (start, end) in sorted(starts.items()):
        head = first.get(p)
        spans.append(
            Span(
                topic=topic,
                partition=p,
                start=start,
                end=end,
                first_offset=None if head is None else head.offset,
                first_at=None if head is None else _stamp(head.timestamp),
            )
        )
    return spans


def _stamp(ms: int) -> str | None:
    if ms < 0:
        return None
    at = datetime.fromtimestamp(ms / 1000, UTC)
    return at.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _key(key: bytes | None) -> str:
    return "<no key>" if key is None else key.decode("utf-8", errors="backslashreplace")
