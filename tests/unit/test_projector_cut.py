"""Where the projector ends a batch: at one instant of Kafka time on every partition; what was read
past it waits, unfed, and the position stored is that of its first waiting record."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from confluent_kafka import KafkaError, TopicPartition
from sqlalchemy import create_engine

from services.history import counters, pacing
from services.history.projection import Changes
from services.history.projector import Projector
from services.history.store import Position, Store
from services.settings import Settings

ACCEPTED = ("accepted", 0)
STATS = ("table-stats", 0)


@dataclass(frozen=True)
class Message:
    """A record, or the end of its partition (`end`), as librdkafka's consumer returns them."""

    at: Position
    offset_: int
    timestamp_: int = 0
    end: bool = False

    def error(self) -> KafkaError | None:
        return KafkaError(KafkaError._PARTITION_EOF) if self.end else None

    def topic(self) -> str:
        return self.at[0]

    def partition(self) -> int:
        return self.at[1]

    def offset(self) -> int:
        return self.offset_

    def timestamp(self) -> tuple[int, int]:
        return (1, self.timestamp_)

    def value(self) -> bytes:
        return b"{}"


class Consumer:
    """A consumer over fixed partitions (records' timestamps): a fetch brings up to `fetched` of
    each partition not paused, and its end once there; pausing a partition drops what was
    fetched of it and not returned, which is fetched again once it is resumed."""

    def __init__(self, logs: dict[Position, list[int]], fetched: int = 10) -> None:
        self.fetched = fetched
        self.logs = logs
        self.at = dict.fromkeys(logs, 0)
        self.queue: list[Message] = []
        self.paused: set[Position] = set()
        self.ended: set[Position] = set()

    def _fetch(self) -> None:
        for key, log in self.logs.items():
            if key in self.paused:
                continue
            taken = log[self.at[key] : self.at[key] + self.fetched]
            self.queue += [Message(key, self.at[key] + n, ts) for n, ts in enumerate(taken)]
            self.at[key] += len(taken)
            if self.at[key] == len(log) and key not in self.ended:
                self.ended.add(key)
                self.queue.append(Message(key, len(log), end=True))

    def poll(self, timeout: float) -> Message | None:
        if not self.queue:
            self._fetch()
        return self.queue.pop(0) if self.queue else None

    def consume(self, num_messages: int, timeout: float) -> list[Message]:
        taken, self.queue = self.queue[:num_messages], self.queue[num_messages:]
        return taken

    def pause(self, partitions: list[TopicPartition]) -> None:
        for tp in partitions:
            key = (tp.topic, tp.partition)
            dropped = [m for m in self.queue if m.at == key]
            if dropped:
                self.at[key] = dropped[0].offset_
                self.ended.discard(key)
            self.queue = [m for m in self.queue if m.at != key]
            self.paused.add(key)

    def resume(self, partitions: list[TopicPartition]) -> None:
        self.paused.difference_update((tp.topic, tp.partition) for tp in partitions)


def projector(max_messages: int, consumer: Consumer) -> Projector:
    settings = Settings(topic_accepted=ACCEPTED[0], topic_table_stats=STATS[0])
    p = Projector(settings, Store(create_engine("sqlite://")), max_messages=max_messages)
    p.clocks = dict.fromkeys(consumer.logs)
    p.reached = dict.fromkeys(consumer.logs, 0)
    return p


def events(changes: Changes, source: str) -> int:
    return counters.of_batch(changes)[("croupier_read_events_total", f'{{topic="{source}"}}')]


def test_records_read_past_the_partition_behind_wait_for_the_next_batch() -> None:
    # A sparse accepted partition: one read of it spans 10 s; table-stats are dense.
    consumer = Consumer({ACCEPTED: [0, 5_000, 10_000], STATS: list(range(0, 12_000, 100))})
    p = projector(max_messages=40, consumer=consumer)

    async def first() -> tuple[Changes, int, int, int]:
        batch, count = await p._gather(consumer, None)
        changes = batch.changes
        return (
            changes,
            count,
            p._position(ACCEPTED),
            p._position(STATS),
        )

    changes, count, accepted_at, stats_at = asyncio.run(first())
    # Every record fed is within the slack of the table-stats' clock, and none past it.
    fed_stats = events(changes, "table-stats")
    assert count == events(changes, "accepted") + fed_stats >= 40
    last = consumer.logs[STATS][fed_stats - 1]
    assert consumer.logs[ACCEPTED][:accepted_at] == [
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
    p = projector(max_messages=1_000, consumer=consumer)
    batch, count = asyncio.run(p._gather(consumer, None))
    changes = batch.changes
    assert (events(changes, "accepted"), events(changes, "table-stats"), count) == (1, 50, 51)
    assert not any(p.waiting.values())


def test_a_partition_far_ahead_is_paused_while_a_read_of_it_waits_and_nothing_is_lost() -> None:
    # accepted's records are a second apart, table-stats' 10 ms: accepted runs ahead in time.
    accepted = [1000 * n for n in range(3_000)]
    stats = [10 * n for n in range(30_000)]
    consumer = Consumer({ACCEPTED: accepted, STATS: stats}, fetched=500)
    p = projector(max_messages=5_000, consumer=consumer)
    fed = {"accepted": 0, "table-stats": 0}
    paused = most = 0
    while sum(fed.values()) < len(accepted) + len(stats):
        batch, count = asyncio.run(p._gather(consumer, None))
        assert count > 0
        for source in fed:
            fed[source] += events(batch.changes, source)
        paused += ACCEPTED in consumer.paused
        most = max(most, len(p.waiting.get(ACCEPTED, [])))
        # Where each batch ends: its first record not fed, every record before it fed once.
        assert p._position(ACCEPTED) == fed["accepted"]
        assert p._position(STATS) == fed["table-stats"]
    assert fed == {"accepted": len(accepted), "table-stats": len(stats)}
    assert paused > 0
    assert most < pacing.STEP + 2 * consumer.fetched
    assert not any(p.waiting.values())
