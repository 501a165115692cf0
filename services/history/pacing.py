"""Which partitions the projector reads next: the ones furthest behind in Kafka time (pure).

A bet's placement (topic `accepted`, partitioned by table) and its decision (`settlements` or
`refunds`, partitioned by player) are committed in one transaction, or the decision later. Read
partition by partition as they happen to be fetched, the two land in different batches, and the
bet's row is written twice. Read in step by their timestamps, as Kafka Streams picks the record
with the lowest timestamp across a task's partitions, most land in the same batch and the row is
written once. Nothing depends on it for correctness: it only decides the order of reads.
"""

from __future__ import annotations

from collections.abc import Collection, Hashable, Mapping
from typing import Final, TypeVar

P = TypeVar("P", bound=Hashable)

SLACK_MS: Final = 20
"""How far (Kafka time) a partition may read ahead of the furthest-behind one."""
STEP: Final = 1000
"""Records taken at most per read, so that the choice is made again often."""


def due(clocks: Mapping[P, int | None], idle: Collection[P], slack_ms: int = SLACK_MS) -> list[P]:
    """The partitions to read next, given the timestamp of the last record read from each (None:
    none read yet) and those with nothing more to read now (`idle`): every partition whose clock
    is within `slack_ms` of the lowest clock of a partition with more to read, and every one not
    read yet; all of them when none has more to read."""
    live = [p for p in clocks if p not in idle]
    known = [clock for p in live if (clock := clocks[p]) is not None]
    if not known:
        return list(clocks)
    low = min(known) + slack_ms
    return [p for p in live if (clock := clocks[p]) is None or clock <= low]
