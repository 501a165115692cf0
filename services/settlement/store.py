"""A task's state store: what each transaction writes of its fold's state, and where a restore
of it starts (pure; the model is Kafka Streams' state store and its changelog, and the cleaner of
a log-structured store).

Every transaction writes what its batch changed (`capture.Layout.changes`: the changed tables,
boards, rounds and new segments of bets; tombstones for forgotten rounds) and last the task's
position record: the input offsets its state is the fold of, and the offset of its state partition
a restore reads from. That offset is the age of the oldest part of the state: each part (a table,
or a round with its bets) is written whole when it first appears, and the store remembers from
which offset on, at the latest, it was. The changelog is compacted, but compaction lags; so once
the bytes of the partition from that offset on outgrow the live state's twice over (or a floor),
each transaction also writes the oldest parts whole again, in proportion to what it wrote, and the
restore offset moves past them. A restore thus reads about twice the live state at most, whatever
the history, and whenever the worker stopped (docs/DESIGN.md, "The state store").

After a refold, the first transaction writes the whole state and tombstones the keys of the old
state that it no longer holds (`stale`).
"""

from __future__ import annotations

from collections import OrderedDict, deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

from services.settlement import capture, state
from services.settlement.fold import Fold
from services.settlement.state import Entry, Part

SPAN: Final = 2
"""How many times the live state's bytes the partition may hold from the restore offset on before
the oldest parts are written again."""
FLOOR: Final = 256 * 1024
"""Bytes the partition may hold from the restore offset on in any case (a small state)."""
IDLE_CREDIT: Final = 1024 * 1024
"""Bytes of oldest parts written again in a transaction of their own when the input is idle."""

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
    """The offset after the last state record committed (None: unknown; nothing written again)."""
    ages: OrderedDict[Part, int] = field(default_factory=OrderedDict)
    """Each live part, oldest first, and an offset at or before which it was last written whole."""
    sizes: dict[bytes, int] = field(default_factory=dict)
    """The bytes of each live entry (key and value), and their sum, `live`."""
    live: int = 0
    window: int = 0
    """The bytes of the committed transactions not wholly before the restore offset."""
    spans: deque[tuple[int, int]] = field(default_factory=deque)
    """Those transactions' ends and bytes, oldest first."""
    writing: deque[int] = field(default_factory=deque)
    """The bytes of each transaction written and not yet committed, oldest first (the worker folds
    the next batch while the last one commits)."""
    cleaned: bool = False
    """Oldest parts were written again since the store last caught up."""
    credit: int = 0
    """Bytes of oldest parts earned and not yet written (a part waits until it is affordable)."""
    floor: int = FLOOR
    layout: capture.Layout = field(default_factory=capture.Layout)
    """How many segments of bets the changelog holds for each round."""

    @classmethod
    def restored(
        cls,
        found: Found | None,
        stale: frozenset[bytes] | None,
        entries: Mapping[bytes, bytes],
        offsets: Mapping[bytes, int],
    ) -> Store:
        """The store of a task whose state partition a restore read (None: not read): the live
        `entries` it found, and the offset each was read at."""
        if found is None:
            return cls(stale=stale)
        ages: dict[Part, int] = {}
        layout = capture.Layout()
        for key, offset in offsets.items():
            name = state.named(key)
            if name is not None:
                kind, which = name
                ages[which] = min(offset, ages.get(which, offset))
                layout.holds(kind, which)
        sizes = {key: len(key) + len(value) for key, value in entries.items()}
        return cls(
            stale=stale,
            end=found.end,
            ages=OrderedDict(sorted(ages.items(), key=lambda item: item[1])),
            sizes=sizes,
            live=sum(sizes.values()),
            window=found.size,
            spans=deque([(found.end, found.size)]),
            layout=layout,
        )

    @property
    def snapshot(self) -> int:
        """Where a restore of this task starts reading its state partition."""
        for age in self.ages.values():
            return age
        return self.end or 0

    @property
    def cleaning(self) -> bool:
        """The partition from the restore offset on outgrew the live state: the oldest parts are
        written again (an idle task goes on with it in transactions of its own)."""
        if self.stale is not None or self.end is None:
            return False
        return self.window > max(self.floor, SPAN * self.live)

    def entries(self, fold: Fold, at: Positions, credit: int = 0) -> list[Entry]:
        """What this transaction writes to the state partition: the batch's changes, the oldest
        parts again while the store is cleaning, and the position record last."""
        since = self.end or 0
        """No record of this transaction lands before it."""
        if self.stale is None:
            entries = self.layout.changes(fold)
            self._age(entries, since)
            if self.cleaning:
                entries = self._clean(fold, entries, 2 * _size(entries) + 4096 + credit, since)
                self.cleaned = True
            else:
                self.credit = 0
        else:
            entries = self.layout.snapshot(fold)
            kept = {key for key, _ in entries}
            entries.extend((key, None) for key in sorted(self.stale - kept))
            parts = (state.part_of(key) for key in sorted(kept))
            self.ages = OrderedDict((which, since) for which in parts if which is not None)
        written = self._keep(entries)
        position = state.position_entry(
            at["rounds"], at["bets"], self.snapshot, self.layout.count(fold)
        )
        entries.append(position)
        self.writing.append(written + _size([position]))
        return entries

    def committed(self, end: int | None, batches: int = 1) -> bool:
        """The transaction was committed, holding what `entries` gave for `batches` batches, its
        last state record before `end` (None: unknown); True when it wrote a refold's whole
        state, or the oldest parts caught up (restores read from a later offset from now on)."""
        written = sum(self.writing.popleft() for _ in range(min(batches, len(self.writing))))
        if end is not None:
            self.end = end
        whole, self.stale = self.stale is not None, None
        self.spans.append((self.end or 0, written))
        self.window += written
        snapshot = self.snapshot
        while self.spans and self.spans[0][0] <= snapshot:
            self.window -= self.spans.popleft()[1]
        caught_up = self.cleaned and not self.cleaning
        if caught_up:
            self.cleaned = False
        return whole or caught_up

    def _keep(self, entries: list[Entry]) -> int:
        """Keep the bytes of each live entry, as these entries leave them; the entries' bytes."""
        sizes = self.sizes
        written = 0
        for key, value in entries:
            self.live -= sizes.pop(key, 0)
            size = len(key) + len(value or b"")
            written += size
            if value is not None:
                sizes[key] = size
                self.live += size
        return written

    def _age(self, changes: list[Entry], since: int) -> None:
        """Parts that first appear in these changes are written whole from `since` on; a
        forgotten round's part is gone."""
        for key, value in changes:
            which = state.part_of(key)
            if which is None:
                continue
            table_id, round_id = which
            if (
                value is None
                and round_id is not None
                and key == state.round_key(table_id, round_id)
            ):
                self.ages.pop(which, None)
            elif which not in self.ages:
                self.ages[which] = since

    def _clean(self, fold: Fold, entries: list[Entry], credit: int, since: int) -> list[Entry]:
        """The batch's entries and the oldest parts written whole again, as far as the credit
        goes (what is left carries over)."""
        self.credit += credit
        merged = dict(entries)
        while self.ages:
            which, age = next(iter(self.ages.items()))
            if age >= since:
                break  # every part was written whole since the last commit
            cost = capture.size(fold, which)
            if cost > self.credit:
                break
            again = self.layout.part(fold, which)
            if again is None:
                del self.ages[which]  # forgotten since: its tombstones were written
                continue
            self.credit -= cost
            merged.update(again)
            self.ages[which] = since
            self.ages.move_to_end(which)
        return sorted(merged.items())


def _size(entries: list[Entry]) -> int:
    return sum(len(key) + len(value or b"") for key, value in entries)
