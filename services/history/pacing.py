"""Which partitions the projector reads next: the ones furthest behind in Kafka time (pure).

A bet's placement and its decision are in one partition of `accepted` (a worker transaction's
journal), so nothing here is needed to bring them together. What it still does is keep the
partitions in step, as Kafka Streams picks the record with the lowest timestamp across a task's
partitions, so that a batch ends at about one instant of Kafka time everywhere (a board or a
rejection is not read far ahead of the journals around it). Nothing depends on it for
correctness: it only decides the order of reads, and where a batch ends.

A read returns up to STEP records of a partition, which may reach far ahead in Kafka time (a
sparse partition's thousand records can span a second), so what was read is fed to the batch only
up to `bound`: the records past it wait in memory, unfed, and the partition's position stored with
the batch is that of its first waiting record (a restart reads them again). A batch thus ends at
about one instant of Kafka time on every partition.
"""

from __future__ import annotations

from collections.abc import Collection, Hashable, Iterable, Mapping
from typing import Final, TypeVar

P = TypeVar("P", bound=Hashable)

SLACK_MS: Final = 20
"""How far (Kafka time) a partition may read ahead of the furthest-behind one."""
STEP: Final = 1000
"""Records taken at most per read, so that the choice is made again often."""


def due(clocks: Mapping[P, int | None], idle: Collection[P], slack_ms: int = SLACK_MS) -> list[P]:
    """The partitions to read next, given the latest timestamp read from each (None: none read
    yet) and those with nothing more to read now (`idle`): every partition whose clock
    is within `slack_ms` of the lowest clock of a partition with more to read, and every one not
    read yet; all of them when none has more to read."""
    live = [p for p in clocks if p not in idle]
    known = [clock for p in live if (clock := clocks[p]) is not None]
    if not known:
        return list(clocks)
    low = min(known) + slack_ms
    return [p for p in live if (clock := clocks[p]) is None or clock <= low]


def bound(clocks: Mapping[P, int | None], idle: Collection[P], slack_ms: int = SLACK_MS) -> float:
    """The latest timestamp a record may have to be fed now: `slack_ms` past the lowest clock
    (latest timestamp read) of a partition with more to read, so that every record read from the
    partitions behind is fed, even where a partition's timestamps go back; -inf while such a
    partition has not been read yet (it may hold the earliest records), +inf when none has more
    to read."""
    live = [clocks[p] for p in clocks if p not in idle]
    if not live:
        return float("inf")
    if any(clock is None for clock in live):
        return float("-inf")
    return min(clock for clock in live if clock is not None) + slack_ms


def ready(timestamps: Iterable[int], limit: float) -> int:
    """How many of a partition's waiting records, in offset order, may be fed under `limit`: up
    to the first one past it (a partition's order is kept, whatever its timestamps); it stops
    there, so a lazy iterable is read no further."""
    n = 0
    for timestamp in timestamps:
        if timestamp > limit:
            break
        n += 1
    return n
