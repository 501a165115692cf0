"""A task's state store: what each transaction writes of its fold's state, and where a restore
of it starts (pure; the model is Kafka Streams' state store and its changelog).

Every transaction writes what its batch changed (`capture.changes`: the changed tables, boards,
rounds and new segments of bets; tombstones for forgotten rounds) and last the task's position
record: the input offsets its state is the fold of, and the offset of its state partition a
restore reads from. The changelog is compacted, but compaction lags; so once the records written
since the last whole rewrite outgrow the live state (or a floor), the store writes the whole
state again, a part in each transaction, in proportion to what the transaction wrote
(`capture.Rewrite`). When a rewrite completes, every live entry was written at or after its start,
and restores read the partition from there: a restore reads at most about twice the live state,
whatever the history (docs/DESIGN.md, "The state store").

After a refold, the first transaction writes the whole state and tombstones the keys of the old
state that it no longer holds (`stale`).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Final

from services.settlement import capture, state
from services.settlement.fold import Fold
from services.settlement.state import Entry

REWRITE_BYTES: Final = 2 * 1024 * 1024
REWRITE_RECORDS: Final = 5_000
"""A whole rewrite starts once the records (or bytes) written since the last one pass these and the
live state's own."""
IDLE_CREDIT: Final = 1024 * 1024
"""Bytes of a rewrite in progress written in a transaction of its own when the input is idle."""

Positions = dict[str, int]
"""The next offset to read of each input role (`rounds`, `bets`)."""


@dataclass(frozen=True, kw_only=True)
class Found:
    """What a restore read of a task's state partition: the offsets it spans and its size."""

    start: int
    end: int
    records: int
    size: int
    live_records: int
    live_size: int


@dataclass(kw_only=True)
class Store:
    """The changelog bookkeeping of one task; the fold never sees it."""

    stale: frozenset[bytes] | None = None
    """Set after a refold: the next transaction writes the whole state and tombstones these."""
    end: int | None = None
    """The offset after the last state record committed (None: unknown, no rewrite starts)."""
    snapshot: int = 0
    """Where a restore of this task starts reading its state partition."""
    rewrite: capture.Rewrite | None = None
    tail: tuple[int, int] = (0, 0)
    """State records and bytes written since the last whole rewrite completed (or left unread)."""
    live: tuple[int, int] = (0, 0)
    """Records and bytes the last whole rewrite wrote (or the live state restored)."""
    writing: deque[tuple[int, int]] = field(default_factory=deque)
    """State records and bytes of each transaction written and not yet committed, oldest first
    (the worker folds the next batch while the last one commits)."""

    @classmethod
    def restored(cls, found: Found | None, stale: frozenset[bytes] | None) -> Store:
        """The store of a task whose state partition a restore read (None: not read)."""
        if found is None:
            return cls(stale=stale)
        live = (found.live_records, found.live_size)
        tail = (max(0, found.records - live[0]), max(0, found.size - live[1]))
        return cls(stale=stale, end=found.end, snapshot=found.start, live=live, tail=tail)

    @property
    def rewriting(self) -> bool:
        """A whole rewrite is in progress or due (one an idle task starts or goes on with)."""
        if self.stale is not None:
            return False
        return self.rewrite is not None or (self.end is not None and self._due())

    def _due(self) -> bool:
        """The tail written since the last whole rewrite outgrew it (or the floor)."""
        tail_records, tail_bytes = self.tail
        live_records, live_bytes = self.live
        return tail_records > max(REWRITE_RECORDS, live_records) or tail_bytes > max(
            REWRITE_BYTES, live_bytes
        )

    def entries(self, fold: Fold, at: Positions, credit: int = 0) -> list[Entry]:
        """What this transaction writes to the state partition: the batch's changes, the next part
        of a rewrite in progress, and the position record last."""
        snapshot = self.snapshot
        if self.stale is None:
            entries = self._changes(fold, credit)
            if self.rewrite is not None and self.rewrite.done:
                snapshot = self.rewrite.start
        else:
            entries = capture.snapshot(fold)
            kept = {key for key, _ in entries}
            entries.extend((key, None) for key in sorted(self.stale - kept))
            snapshot = self.end or 0
        entries.append(
            state.position_entry(at["rounds"], at["bets"], snapshot, capture.count(fold))
        )
        self.writing.append((len(entries), _size(entries)))
        return entries

    def committed(self, end: int | None) -> bool:
        """The transaction was committed, its last state record before `end`; True when it
        completed a whole rewrite (restores start there from now on)."""
        written = self.writing.popleft()
        if self.stale is not None:
            self.snapshot, self.live, self.tail = self.end or 0, written, (0, 0)
            self.stale = None
            self.end = end if end is not None else self.end
            return True
        self.end = end if end is not None else self.end
        self.tail = (self.tail[0] + written[0], self.tail[1] + written[1])
        rewrite = self.rewrite
        if rewrite is None or not rewrite.done:
            return False
        self.snapshot = rewrite.start
        self.live = (rewrite.records, rewrite.written)
        self.tail = (max(0, self.tail[0] - rewrite.records), max(0, self.tail[1] - rewrite.written))
        self.rewrite = None
        return True

    def _changes(self, fold: Fold, credit: int) -> list[Entry]:
        """The batch's changes, and the next part of a whole rewrite: one starts once the tail
        written since the last one outgrows it (or the floor), and each transaction writes at most
        twice its own changes' bytes of it."""
        entries = capture.changes(fold)
        if self.rewrite is None and self.end is not None and self._due():
            self.rewrite = capture.Rewrite(fold, self.end)
            self.tail = (0, 0)
        if self.rewrite is None:
            return entries
        merged = dict(entries)
        merged.update(self.rewrite.step(fold, 2 * _size(entries) + 4096 + credit))
        return sorted(merged.items())


def _size(entries: list[Entry]) -> int:
    return sum(len(key) + len(value or b"") for key, value in entries)
