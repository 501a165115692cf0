"""The archive's manifests and their chain (pure: bytes in, verdicts out).

A sealed day `D` has `days/D/manifest.json`: its files, each with its SHA-256, and the SHA-256 of
the day before's manifest (`previous`; none for the archive's first day). Days are consecutive:
a day without records has a manifest with no files, so a missing day breaks the chain. The days
not sealed yet are listed in `open.json`, whose `previous` is the SHA-256 of the last sealed
manifest, with the positions the archive resumes from (docs/DESIGN.md, "The archive").
"""

from __future__ import annotations

import hashlib
from datetime import UTC, date, datetime, timedelta
from typing import Final

import msgspec

ROLES: Final = ("accepted", "rejected")
"""The topics archived, by role: the journals of accepted inputs and decisions, the rejected."""
MANIFEST: Final = "manifest.json"
OPEN: Final = "open.json"


class Entry(msgspec.Struct, frozen=True, kw_only=True):
    """One data file: gzip JSON Lines of one topic partition's records of one day, by offset."""

    day: str
    name: str
    topic: str
    partition: int
    first: int
    last: int
    records: int
    sha256: str

    @property
    def path(self) -> str:
        return f"days/{self.day}/{self.name}"


class Manifest(msgspec.Struct, frozen=True, kw_only=True):
    """A sealed day: its files and the SHA-256 of the day before's manifest."""

    v: int = 1
    day: str
    previous: str | None
    files: tuple[Entry, ...] = ()


Positions = dict[str, dict[str, int]]
"""topic role -> partition (as text, JSON's keys) -> the next offset to archive."""
Days = dict[str, dict[str, str]]
"""topic role -> partition (as text) -> the day its last archived record went to."""


class Open(msgspec.Struct, frozen=True, kw_only=True):
    """The archive's commit point: where each partition resumes (the next offset), the last day
    each partition's records went to, the last sealed day and its manifest's SHA-256, and the
    files of the days not sealed yet."""

    v: int = 1
    sealed: str | None = None
    previous: str | None = None
    positions: Positions = {}
    days: Days = {}
    files: tuple[Entry, ...] = ()


def encode(value: Manifest | Open) -> bytes:
    return msgspec.json.format(msgspec.json.encode(value), indent=1) + b"\n"


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def day_of(timestamp_ms: int) -> str:
    """The UTC day of a Kafka timestamp (ms); a record without one (-1) counts on 1970-01-01."""
    return datetime.fromtimestamp(max(timestamp_ms, 0) / 1000, UTC).date().isoformat()


def next_day(day: str) -> str:
    return (date.fromisoformat(day) + timedelta(days=1)).isoformat()


def days_between(first: str, last: str) -> list[str]:
    """Every day from `first` to `last`, both included."""
    start, end = date.fromisoformat(first), date.fromisoformat(last)
    return [(start + timedelta(days=n)).isoformat() for n in range((end - start).days + 1)]


def effective_day(timestamp_ms: int, partition_last: str | None, oldest_open: str | None) -> str:
    """The day a record is archived on: its timestamp's UTC day, but never before the day of the
    partition's record before it (a clock set back does not reorder a partition) nor before the
    oldest day not sealed yet (a sealed day never changes)."""
    return max(d for d in (day_of(timestamp_ms), partition_last, oldest_open) if d is not None)


class Tampered(Exception):
    """The archive fails its check: `path` names the file, the message what is wrong and what to
    do."""

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"{path}: {problem}")
        self.path = path
        self.problem = problem


RESTORE: Final = "restore it from a copy of the archive (or archive the day again from the topics)"
