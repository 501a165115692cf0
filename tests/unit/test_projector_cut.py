"""Where the projector ends a batch: at one instant of Kafka time on every partition; what was read
past it waits, unfed, and the position stored is that of its first waiting record."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from aiokafka import TopicPartition  # type: ignore[import-untyped]
from sqlalchemy import create_engine

from services.history import counters
from services.history.projection import Changes
from services.history.projector import Projector
from services.history.store import Store
from services.settings import Settings

ACCEPTED = TopicPartition("accepted", 0)
STATS = TopicPartition("table-stats", 0)


@dataclass(frozen=True)
class Record:
    offset: int
    timestamp: int
    value: bytes = b"{}"


class Consumer:
    """A consumer over fixed partitions (records' timestamps): each getmany returns up to
    max_records in all, and at most `fetched` of each partition (what one fetch brought)."""

    def __init__(self, logs: dict[TopicPartition, list[int]], fetched: int = 10) -> None:
        self.fetched = fetched
        self.logs = {tp: [Record(n, ts) for n, ts in enumerate(t)] for tp, t in logs.items()}
        self.at = dict.fromkeys(logs, 0)

    async def getmany(
        self, *partitions: TopicPartition, timeout_ms: int, max_records: int
    ) -> dict[TopicPartition, list[Record]]:
        found: dict[TopicPartition, list[Record]] = {}
        for tp in partitions:
            taken = self.logs[tp][
                self.at[tp] : self.at[tp]
                + min(self.fetched, max_records - sum(map(len, found.values())))
            ]
            if taken:
                found[tp] = taken
                self.at[tp] += len(taken)
        return found

    async def position(self, tp: TopicPartition) -> int:
        return self.at[tp]

    def last_stable_offset(self, tp: TopicPartition) -> int:
        return len(self.logs[tp])


def projector(max_messages: int) -> Projector:
    settings = Settings(topic_accepted=ACCEPTED.topic, topic_table_stats=STATS.topic)
    p = Projector(settings, Store(create_engine("sqlite://")), max_messages=max_messages)
    p.clocks = {ACCEPTED: None, STATS: None}
    return p


def events(changes: Changes, source: str) -> int:
    return counters.of_batch(changes)[("croupier_read_events_total", f'{{topic="{source}"}}')]


def test_records_read_past_the_partition_behind_wait_for_the_next_batch() -> None:
    # A sparse accepted partition: one read of it spans 10 s; table-stats are dense.
    consumer = Consumer({ACCEPTED: [0, 5_000, 10_000], STATS: list(range(0, 12_000, 100))})
    p = projector(max_messages=40)

    async def first() -> tuple[Changes, int, int, int]:
        batch, count = await p._gather(consumer, None)
        changes = batch.changes
        return (
            changes,
            count,
            await p._position(consumer, ACCEPTED),
            await p._position(consumer, STATS),
        )

    changes, count, accepted_at, stats_at = asyncio.run(first())
    # Every record fed is within the slack of the table-stats' clock, and none past it.
    fed_stats = events(changes, "table-stats")
    assert count == events(changes, "accepted") + fed_stats >= 40
    last = consumer.logs[STATS][fed_stats - 1].timestamp
    assert [r.timestamp for r in consumer.logs[ACCEPTED][:accepted_at]] == [
        t for t in (0, 5_000, 10_000) if t <= last + 20
    ]
    # Where the batch ends is the first record not fed, whatever was read ahead.
    assert stats_at == fed_stats
    assert consumer.at[ACCEPTED] == 3 > accepted_at
    waiting = p.waiting[ACCEPTED]
    assert [r.offset for r in waiting] == list(range(accepted_at, 3))

    # The next batches feed them once, in order, and nothing is fed twice or lost.
    total = count
    while total < 3 + 120:
        _, n = asyncio.run(p._gather(consumer, None))
        assert n > 0
        total += n
    assert total == 3 + 120
    assert not any(p.waiting.values())


def test_a_partition_with_nothing_more_to_read_holds_nobody_back() -> None:
    consumer = Consumer({ACCEPTED: [0], STATS: list(range(0, 5_000, 100))})
    p = projector(max_messages=1_000)
    batch, count = asyncio.run(p._gather(consumer, None))
    changes = batch.changes
    assert (events(changes, "accepted"), events(changes, "table-stats"), count) == (1, 50, 51)
    assert not any(p.waiting.values())
