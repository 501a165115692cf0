"""Writing the archive exactly once: segments, then the commit point, then sealing.

One commit: each (day, topic, partition) of the batch becomes a segment file written atomically
and durably; then `open.json` is replaced, naming those segments and the positions after them.
Only `open.json` says what is archived: a crash before it leaves segments nobody names, removed
when the archive starts again, which reads those records again from the old positions. Then the
days every partition has passed are sealed, in order: a day's segments of a partition are merged
into one file (gzip members concatenated), its manifest written (the day before's SHA-256 in it),
and `open.json` replaced without them. A crash between a manifest and `open.json` is finished on
start: a day with a manifest is sealed, whatever `open.json` still says.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Final

import msgspec

from services.archive import lines
from services.archive.manifest import (
    MANIFEST,
    OPEN,
    Entry,
    Manifest,
    Open,
    days_between,
    digest,
    effective_day,
    encode,
    next_day,
)
from services.archive.store import Storage
from services.audit.reader import Message

GATHER: Final = 32
"""Segments of one partition's open day merged into one file."""
Batch = Iterable[tuple[str, Message]]
"""Records read, each with its topic's role, in each partition's offset order."""


class Writer:
    """The archive in a storage, opened for writing: recovered, orphans removed."""

    def __init__(self, storage: Storage, gather: int = GATHER) -> None:
        self.storage = storage
        self.gather = gather
        self.state = recover(storage)

    def position(self, role: str, partition: int) -> int | None:
        """The next offset to archive of a partition; None before its first record."""
        return self.state.positions.get(role, {}).get(str(partition))

    def commit(
        self,
        batch: Batch,
        caught: Mapping[tuple[str, int], bool],
        read: Mapping[tuple[str, int], int] | None = None,
    ) -> int:
        """Archive the batch; then seal every day that all partitions have passed (`caught`:
        every partition read, and whether it has reached its end). `read`: where the consumer
        stands in each partition after the batch (past transaction markers, which hold offsets
        and no record). Returns records written."""
        state = self.state
        positions = {role: dict(by) for role, by in state.positions.items()}
        last_days = {role: dict(by) for role, by in state.days.items()}
        oldest_open = min((e.day for e in state.files), default=None)
        if oldest_open is None and state.sealed is not None:
            oldest_open = next_day(state.sealed)
        groups: dict[tuple[str, str, int], list[Message]] = defaultdict(list)
        for role, m in batch:
            p = str(m.partition)
            if m.offset < positions.get(role, {}).get(p, 0):
                continue  # read again after a seek: archived already
            day = effective_day(m.timestamp, last_days.get(role, {}).get(p), oldest_open)
            groups[day, role, m.partition].append(m)
            positions.setdefault(role, {})[p] = m.offset + 1
            last_days.setdefault(role, {})[p] = day
        for (role, partition), at in (read or {}).items():
            if at > positions.get(role, {}).get(str(partition), 0):
                positions.setdefault(role, {})[str(partition)] = at
        added = [self._segment(day, role, p, ms) for (day, role, p), ms in sorted(groups.items())]
        files, gone = self._gather(state.files + tuple(added))
        moved = positions != state.positions
        state = msgspec.structs.replace(state, positions=positions, days=last_days, files=files)
        if added or moved:
            self.storage.put(OPEN, encode(state))
        for e in gone:
            self.storage.remove(e.path)
        self.state = state
        self._seal(caught)
        return sum(e.records for e in added)

    def _gather(self, files: tuple[Entry, ...]) -> tuple[tuple[Entry, ...], list[Entry]]:
        """The open days' files with every `gather` segments of a partition's day merged into
        one file (so that a day of frequent commits is not a file a commit), and the segments
        merged, to remove once the commit point names the merged file instead."""
        small: dict[tuple[str, str, int], list[Entry]] = defaultdict(list)
        for e in files:
            if e.name == _segment_name(e.topic, e.partition, e.first):
                small[e.day, e.topic, e.partition].append(e)
        gone: list[Entry] = []
        for (day, role, p), segments in sorted(small.items()):
            if len(segments) >= self.gather:
                segments.sort(key=lambda e: e.first)
                first, last = segments[0].first, segments[-1].last
                name = f"{role}-{p}-{first:012d}-{last:012d}.jsonl.gz"
                merged = self._merge(day, name, role, p, segments)
                files = (*(e for e in files if e not in segments), merged)
                gone.extend(segments)
        return files, gone

    def _merge(self, day: str, name: str, role: str, p: int, segments: list[Entry]) -> Entry:
        """One file of a partition's consecutive files of a day (gzip members concatenated)."""
        data = b"".join(self.storage.get(e.path) for e in segments)
        span = (segments[0].first, segments[-1].last, sum(e.records for e in segments))
        return self._put(day, name, role, p, span, data)

    def _segment(self, day: str, role: str, partition: int, messages: list[Message]) -> Entry:
        data = lines.compress(
            lines.line(m.partition, m.offset, m.timestamp, m.key, m.value) for m in messages
        )
        first = messages[0].offset
        name = _segment_name(role, partition, first)
        return self._put(
            day, name, role, partition, (first, messages[-1].offset, len(messages)), data
        )

    def _put(
        self,
        day: str,
        name: str,
        role: str,
        partition: int,
        span: tuple[int, int, int],
        data: bytes,
    ) -> Entry:
        """Write a data file; its entry (`span`: first offset, last offset, records)."""
        self.storage.put(f"days/{day}/{name}", data)
        first, last, records = span
        return Entry(
            day=day,
            name=name,
            topic=role,
            partition=partition,
            first=first,
            last=last,
            records=records,
            sha256=digest(data),
        )

    def _seal(self, caught: Mapping[tuple[str, int], bool]) -> None:
        state = self.state
        newest = max((d for by in state.days.values() for d in by.values()), default=None)
        open_days = sorted({e.day for e in state.files})
        for day in open_days:
            if newest is None or day >= newest:
                return
            passed = all(
                done or state.days.get(role, {}).get(str(p), "") > day
                for (role, p), done in caught.items()
            )
            if not passed:
                return
            self._seal_day(day)
            state = self.state

    def _seal_day(self, day: str) -> None:
        state = self.state
        previous = state.previous
        if state.sealed is not None:
            for gap in days_between(next_day(state.sealed), day)[:-1]:
                previous = self._manifest(Manifest(day=gap, previous=previous))
        theirs = [e for e in state.files if e.day == day]
        merged: list[Entry] = []
        by_partition: dict[tuple[str, int], list[Entry]] = defaultdict(list)
        for e in sorted(theirs, key=lambda e: (e.topic, e.partition, e.first)):
            by_partition[e.topic, e.partition].append(e)
        for (role, p), segments in sorted(by_partition.items()):
            merged.append(self._merge(day, f"{role}-{p}.jsonl.gz", role, p, segments))
        sha = self._manifest(Manifest(day=day, previous=previous, files=tuple(merged)))
        self.state = msgspec.structs.replace(
            state,
            sealed=day,
            previous=sha,
            files=tuple(e for e in state.files if e.day != day),
        )
        self.storage.put(OPEN, encode(self.state))
        for e in theirs:
            self.storage.remove(e.path)

    def _manifest(self, manifest: Manifest) -> str:
        data = encode(manifest)
        self.storage.put(f"days/{manifest.day}/{MANIFEST}", data)
        return digest(data)


def _segment_name(role: str, partition: int, first: int) -> str:
    return f"{role}-{partition}-{first:012d}.jsonl.gz"


def sealed_days(storage: Storage) -> list[str]:
    """The days with a manifest, in order."""
    return [d for d in storage.names("days") if storage.exists(f"days/{d}/{MANIFEST}")]


def recover(storage: Storage) -> Open:
    """The commit point, with a sealing a crash interrupted finished, and every file it and the
    manifests do not name removed."""
    state = msgspec.json.decode(storage.get(OPEN), type=Open) if storage.exists(OPEN) else Open()
    sealed = sealed_days(storage)
    if sealed and (state.sealed is None or sealed[-1] > state.sealed):
        last = sealed[-1]
        data = storage.get(f"days/{last}/{MANIFEST}")
        state = msgspec.structs.replace(
            state,
            sealed=last,
            previous=digest(data),
            files=tuple(e for e in state.files if e.day > last),
        )
        storage.put(OPEN, encode(state))
    named = {e.path for e in state.files}
    for day in sealed:
        manifest = msgspec.json.decode(storage.get(f"days/{day}/{MANIFEST}"), type=Manifest)
        named.update(e.path for e in manifest.files)
        named.add(f"days/{day}/{MANIFEST}")
    for day in storage.names("days"):
        for name in storage.names(f"days/{day}"):
            if f"days/{day}/{name}" not in named:
                storage.remove(f"days/{day}/{name}")
    return state
