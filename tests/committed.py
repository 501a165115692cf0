"""What croupier's workers commit for given input streams, for tests of the read side.

The settlement fold turns an interleaving of the input topics into the messages the workers write
in their transactions: the accepted inputs (the fold's own journal of them, as the engine writes
it), the settlements, refunds and rejections, and after every batch the changed tables'
statistics. The read side is then fed
these messages the way a consumer of several topics may read them: in any order across topics.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass, field

from schemas.codec import encode
from schemas.records import Adjustment, Refund, Rejected, Settlement
from services.history.projection import Source
from services.settlement.fold import Fold
from services.simulation.streams import Streams, interleave


@dataclass
class Committed:
    """Each output topic's messages in commit order: (raw, Kafka timestamp in ms)."""

    topics: dict[Source, list[tuple[bytes, int]]] = field(default_factory=dict)

    def add(self, source: Source, raw: bytes, timestamp_ms: int) -> None:
        self.topics.setdefault(source, []).append((raw, timestamp_ms))

    def count(self, source: Source) -> int:
        return len(self.topics.get(source, []))


def commit(streams: Streams, *, seed: int = 0, batch: int = 50) -> Committed:
    """Fold an allowed interleaving of the streams as the workers do, batch by batch."""
    return commit_inputs(interleave(streams, random.Random(seed)), batch=batch)


def commit_inputs(inputs: Iterable[tuple[str, bytes]], *, batch: int = 50) -> Committed:
    """Fold input messages (topic `rounds` or `bets`, raw) in this order, as the workers do."""
    fold = Fold(journal=True)
    journal = fold.journal
    assert journal is not None
    out = Committed()
    clock = 1_700_000_000_000
    for n, (kind, raw) in enumerate(inputs, start=1):
        clock += 7
        records = fold.feed(kind, raw)
        for _, accepted in journal.accepted:
            out.add("accepted", accepted, clock)
        journal.clear()
        for record in records:
            match record:
                case Settlement():
                    out.add("settlements", encode(record), clock)
                case Refund():
                    out.add("refunds", encode(record), clock)
                case Adjustment():
                    out.add("adjustments", encode(record), clock)
                case Rejected():
                    out.add("rejected", encode(record), clock)
                case _:
                    pass
        if n % batch == 0:
            _boards(fold, out, clock)
    _boards(fold, out, clock)
    return out


def _boards(fold: Fold, out: Committed, clock: int) -> None:
    for table_id in sorted(fold.boards_changed):
        stats = fold.stats(table_id)
        if stats is not None:
            out.add("table-stats", encode(stats), clock)
    fold.boards_changed.clear()


def shuffled(committed: Committed, rng: random.Random) -> list[tuple[Source, bytes, int]]:
    """Every message once, each topic in its order, the topics merged at random."""
    queues = {source: list(messages) for source, messages in committed.topics.items() if messages}
    merged: list[tuple[Source, bytes, int]] = []
    while queues:
        source = rng.choice(sorted(queues))
        take = rng.randint(1, 40)
        for raw, timestamp in queues[source][:take]:
            merged.append((source, raw, timestamp))
        del queues[source][:take]
        if not queues[source]:
            del queues[source]
    return merged
