"""What croupier's workers commit for given input streams, for tests of the read side.

The settlement fold turns an interleaving of the input topics into the messages the workers write
in their transactions, `batch` inputs a transaction: the journal (the inputs accepted and the
decisions committed, made by the engine's own `schemas.journal.records`), the rejections, and the
changed tables' statistics. The read side is then fed these messages the way a consumer of
several topics may read them: in any order across topics.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass, field

from schemas.codec import encode
from schemas.journal import records as journal_records
from schemas.records import Adjustment, Refund, Rejected, Settlement
from services.history.projection import Source
from services.settlement.fold import Fold
from services.simulation.streams import Streams, interleave


@dataclass
class Committed:
    """Each output topic's messages in commit order: (raw, Kafka timestamp in ms)."""

    topics: dict[Source, list[tuple[bytes, int]]] = field(default_factory=dict)
    decisions: int = 0
    """How many settlements and refunds the journals carry."""

    def add(self, source: Source, raw: bytes, timestamp_ms: int) -> None:
        self.topics.setdefault(source, []).append((raw, timestamp_ms))

    def count(self, source: Source) -> int:
        return len(self.topics.get(source, []))


def commit(streams: Streams, *, seed: int = 0, batch: int = 50) -> Committed:
    """Fold an allowed interleaving of the streams as the workers do, batch by batch."""
    return commit_inputs(interleave(streams, random.Random(seed)), batch=batch)


def commit_inputs(inputs: Iterable[tuple[str, bytes]], *, batch: int = 50) -> Committed:
    """Fold input messages (topic `rounds` or `bets`, raw) in this order, as the workers do,
    `batch` of them in each transaction."""
    fold = Fold(journal=True)
    journal = fold.journal
    assert journal is not None
    out = Committed()
    clock = 1_700_000_000_000
    decided: list[bytes] = []
    n = 0
    for n, (kind, raw) in enumerate(inputs, start=1):
        for record in fold.feed(kind, raw):
            match record:
                case Settlement() | Refund():
                    decided.append(encode(record))
                    out.decisions += 1
                case Adjustment():
                    decided.append(encode(record))
                case Rejected():
                    out.add("rejected", encode(record), clock)
                case _:
                    pass
        if n % batch == 0:
            _transaction(fold, out, decided, clock)
            clock += 7
    if n % batch:
        _transaction(fold, out, decided, clock)
    return out


def _transaction(fold: Fold, out: Committed, decided: list[bytes], clock: int) -> None:
    """The journal and boards of one transaction, as the engine writes them."""
    journal = fold.journal
    assert journal is not None
    for value in journal_records([raw for _, raw in journal.accepted], decided):
        out.add("accepted", value, clock)
    journal.clear()
    decided.clear()
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
