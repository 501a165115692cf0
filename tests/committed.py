"""What croupier's workers commit for given input streams, for tests of the read side.

The settlement fold turns an interleaving of the input topics into the messages the workers write
in their transactions: the accepted inputs (an event the fold took in: no rejection, and not a
redelivery, i.e. a round event_id or a bet_id read for the first time), the settlements, refunds
and rejections, and after every batch the changed tables' statistics. The read side is then fed
these messages the way a consumer of several topics may read them: in any order across topics.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import msgspec

from schemas.codec import encode
from schemas.records import Refund, Rejected, Settlement
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
    fold = Fold()
    out = Committed()
    seen: set[tuple[str, str]] = set()
    clock = 1_700_000_000_000
    for n, (kind, raw) in enumerate(interleave(streams, random.Random(seed)), start=1):
        clock += 7
        records = fold.feed(kind, raw)
        if not any(isinstance(r, Rejected) for r in records) and _first(kind, raw, seen):
            out.add("accepted", raw, clock)
        for record in records:
            match record:
                case Settlement():
                    out.add("settlements", encode(record), clock)
                case Refund():
                    out.add("refunds", encode(record), clock)
                case Rejected():
                    out.add("rejected", encode(record), clock)
                case _:
                    pass
        if n % batch == 0:
            _boards(fold, out, clock)
    _boards(fold, out, clock)
    return out


def _first(kind: str, raw: bytes, seen: set[tuple[str, str]]) -> bool:
    try:
        value = msgspec.json.decode(raw)
    except msgspec.DecodeError:
        return False
    key = (kind, str(value.get("bet_id") if kind == "bets" else value.get("event_id")))
    if key in seen:
        return False
    seen.add(key)
    return True


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
