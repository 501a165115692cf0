"""The settlement engine: the fold over Kafka, exactly once, one task per input partition number.

Task p owns partition p of `rounds` and of `bets` (co-partitioned by table_id). Its state is the
fold of everything committed before, rebuilt from the input topics themselves when the task is
assigned, so no worker disk is needed. Each batch of a task is one Kafka transaction holding its
output records and its input offsets (send_offsets_to_transaction), written by the task's own
transactional producer (transactional.id `<prefix>-<p>`): a new owner's producer fences the old
one, so a paused or partitioned worker can write nothing that survives.
"""

from __future__ import annotations

import asyncio
import io
import logging
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition  # type: ignore[import-untyped]
from aiokafka.abc import ConsumerRebalanceListener  # type: ignore[import-untyped]
from aiokafka.coordinator.assignors.range import RangePartitionAssignor  # type: ignore[import-untyped]
from aiokafka.errors import KafkaError, ProducerFenced  # type: ignore[import-untyped]
from aiokafka.structs import OffsetAndMetadata  # type: ignore[import-untyped]
from kafka import errors as kafka_errors  # type: ignore[import-untyped]

from schemas.codec import encode
from schemas.records import Record, Refund, Rejected, Settlement, TableStats
from services.settings import Settings
from services.settlement.fold import Fold
from services.settlement.metrics import Metrics
from services.settlement.outbox import Partitioner, send_all
from services.topics import ensure

log = logging.getLogger("croupier.engine")
MAX_REQUEST = 16 * 1024 * 1024


@dataclass(kw_only=True)
class Task:
    """Partition p of rounds and bets: its fold, its producer, and the next offsets to read."""

    partition: int
    fold: Fold
    producer: AIOKafkaProducer
    positions: dict[TopicPartition, int] = field(default_factory=dict)


class Engine:
    """Consume rounds and bets, fold them, and commit outputs with offsets, batch by batch."""

    def __init__(self, settings: Settings, metrics: Metrics | None = None) -> None:
        self.settings = settings
        self.metrics = metrics or Metrics()
        self.tasks: dict[int, Task] = {}
        self.fenced: dict[int, float] = {}
        self.lock = asyncio.Lock()
        self.partitioner = Partitioner()
        self.partitions: dict[str, int] = {}
        self.consumer: AIOKafkaConsumer | None = None
        self.stopping = asyncio.Event()
        self.topic_kind = {settings.topic_rounds: "rounds", settings.topic_bets: "bets"}

    async def run(self) -> None:
        """Process until stop() is called; every failure of a task is recovered in place."""
        s = self.settings
        problems = await self._ensure_topics()
        if problems:
            raise RuntimeError("; ".join(problems))
        self.consumer = AIOKafkaConsumer(
            bootstrap_servers=s.kafka_bootstrap,
            group_id=s.group_id,
            client_id=f"{s.group_id}-consumer",
            enable_auto_commit=False,
            isolation_level="read_committed",
            auto_offset_reset="earliest",
            partition_assignment_strategy=(RangePartitionAssignor,),
            session_timeout_ms=s.session_timeout_ms,
            heartbeat_interval_ms=max(100, s.session_timeout_ms // 3),
            max_partition_fetch_bytes=4 * 1024 * 1024,
            fetch_max_bytes=16 * 1024 * 1024,
        )
        self.consumer.subscribe(list(s.inputs), listener=_Listener(self))
        await self.consumer.start()
        try:
            await self._partition_counts()
            while not self.stopping.is_set():
                batch = await self.consumer.getmany(timeout_ms=200, max_records=s.batch_records)
                if batch:
                    async with self.lock:
                        await self._process(batch)
                if self.fenced:
                    await self._reclaim()
        finally:
            async with self.lock:
                await self._drop(list(self.tasks))
            await self.consumer.stop()

    async def _ensure_topics(self) -> list[str]:
        """Create or check the topics; a broker not answering yet is waited for, not fatal."""
        while True:
            try:
                return await asyncio.to_thread(ensure, self.settings, io.StringIO())
            except (KafkaError, kafka_errors.KafkaError, OSError) as error:
                if self.stopping.is_set():
                    raise
                log.warning("topics: broker not reachable (%r); retrying in 1 s", error)
                await asyncio.sleep(1)

    def stop(self) -> None:
        self.stopping.set()

    async def _partition_counts(self) -> None:
        while True:
            try:
                return await self._count_partitions()
            except (KafkaError, OSError) as error:
                if self.stopping.is_set():
                    raise
                log.warning("output partitions: broker not reachable (%r); retrying in 1 s", error)
                await asyncio.sleep(1)

    async def _count_partitions(self) -> None:
        producer = AIOKafkaProducer(bootstrap_servers=self.settings.kafka_bootstrap)
        await producer.start()
        try:
            for topic in self.settings.outputs:
                self.partitions[topic] = len(await producer.partitions_for(topic))
        finally:
            await producer.stop()

    async def _process(self, batch: dict[TopicPartition, list[Any]]) -> None:
        work: dict[int, list[tuple[TopicPartition, list[Any]]]] = {}
        for tp, records in batch.items():
            task = self.tasks.get(tp.partition)
            if task is None or tp not in task.positions:
                continue
            fresh = [r for r in records if r.offset >= task.positions[tp]]
            if fresh:
                work.setdefault(tp.partition, []).append((tp, fresh))
        await asyncio.gather(*(self._commit(self.tasks[p], items) for p, items in work.items()))

    async def _commit(self, task: Task, items: list[tuple[TopicPartition, list[Any]]]) -> None:
        """Fold one batch of a task and commit its records and offsets in one transaction."""
        started = time.monotonic()
        wall = time.time()
        messages: list[tuple[str, bytes | None, bytes]] = []
        offsets: dict[TopicPartition, int] = {}
        items.sort(key=lambda item: item[0].topic != self.settings.topic_rounds)
        for tp, records in items:
            kind = self.topic_kind[tp.topic]
            self.metrics.events_in[tp.topic] += len(records)
            for record in records:
                for out in task.fold.feed(kind, record.value):
                    messages.append(self._message(out, record.key))
            offsets[tp] = records[-1].offset + 1
        for table_id in sorted(task.fold.boards_changed):
            stats = task.fold.stats(table_id)
            if stats is not None:
                messages.append(self._message(stats, table_id.encode()))
        task.fold.boards_changed.clear()
        folded = time.monotonic()
        try:
            await task.producer.begin_transaction()
            await send_all(
                task.producer, messages, self.partitions, self.partitioner, task.partition
            )
            sent = time.monotonic()
            await task.producer.send_offsets_to_transaction(
                {tp: OffsetAndMetadata(offset, "") for tp, offset in offsets.items()},
                self.settings.group_id,
            )
            await task.producer.commit_transaction()
        except ProducerFenced:
            log.warning("task %d: fenced by a newer owner; leaving it", task.partition)
            await self._drop([task.partition])
            self.fenced[task.partition] = time.monotonic()
            return
        except Exception as error:  # any failure of the transaction: the committed state is safe
            # Not only KafkaError: a producer that the broker fenced or failed in the background
            # raises IllegalOperation ("not in transaction") on its next send, and that crashed the
            # worker of a paused-then-resumed process (chaos suite). Rebuilding is always safe: a
            # task that is no longer ours is revoked by the rebalance that follows.
            log.warning(
                "task %d: transaction failed (%r); rebuilding from committed", task.partition, error
            )
            await self._abort(task)
            await self._recover([task.partition])
            return
        task.positions.update(offsets)
        done = time.monotonic()
        self.metrics.committed(messages_out=len(messages), seconds=done - started)
        if len(messages) >= 1000:
            newest = max(records[-1].timestamp for _, records in items) / 1000
            log.info(
                "task %d: %d records out: input waited %.0f ms, fold %.0f ms, send %.0f ms, "
                "commit %.0f ms",
                task.partition,
                len(messages),
                (wall - newest) * 1000,
                (folded - started) * 1000,
                (sent - folded) * 1000,
                (done - sent) * 1000,
            )
        self.metrics.pending[task.partition] = task.fold.pending

    def _message(self, record: Record, key: bytes | None) -> tuple[str, bytes | None, bytes]:
        s = self.settings
        match record:
            case Settlement():
                self.metrics.decisions["settlement"] += 1
                return (s.topic_settlements, record.player_id.encode(), encode(record))
            case Refund():
                self.metrics.decisions[f"refund:{record.reason}"] += 1
                return (s.topic_refunds, record.player_id.encode(), encode(record))
            case Rejected():
                self.metrics.rejections[record.reason] += 1
                return (s.topic_rejected, key, encode(record))
            case TableStats():
                return (s.topic_table_stats, key, encode(record))

    async def _abort(self, task: Task) -> None:
        try:
            await task.producer.abort_transaction()
        except Exception as error:  # the producer is replaced by _recover anyway
            log.info("task %d: abort failed (%r)", task.partition, error)

    async def assigned(self, partitions: Iterable[int]) -> None:
        async with self.lock:
            self.fenced.clear()
            await self._recover(sorted(set(partitions)))

    async def revoked(self, partitions: Iterable[int]) -> None:
        async with self.lock:
            self.fenced.clear()
            await self._drop(sorted(set(partitions)))

    async def _reclaim(self) -> None:
        """A task left after a fence that no rebalance took away is still ours: rebuild it.

        Fencing normally comes with a rebalance (the fencer was given the task, or a fenced zombie
        rejoins the group). Should none follow within twice the session timeout while the group
        still assigns the partition here, the task is rebuilt so that it cannot stall.
        """
        assert self.consumer is not None
        patience = 2 * self.settings.session_timeout_ms / 1000
        mine = {tp.partition for tp in self.consumer.assignment()}
        due = [p for p, at in self.fenced.items() if time.monotonic() - at > patience]
        if not due:
            return
        async with self.lock:
            for p in due:
                self.fenced.pop(p, None)
            reclaim = sorted(p for p in due if p in mine and p not in self.tasks)
            if reclaim:
                log.warning("tasks %s: still assigned here after a fence; rebuilding", reclaim)
                await self._recover(reclaim)

    async def _drop(self, partitions: list[int]) -> None:
        for p in partitions:
            task = self.tasks.pop(p, None)
            self.metrics.pending.pop(p, None)
            if task is not None:
                try:
                    await task.producer.stop()
                except Exception as error:
                    log.info("task %d: producer stop failed (%r)", p, error)

    async def _recover(self, partitions: list[int]) -> None:
        """(Re)build tasks: fence older producers first, then fold everything committed before."""
        await self._drop(partitions)
        while partitions and not self.stopping.is_set():
            try:
                await self._build(partitions)
                return
            except (TimeoutError, KafkaError, OSError) as error:
                log.warning("tasks %s: rebuild failed (%r); retrying in 1 s", partitions, error)
                await self._drop(partitions)
                await asyncio.sleep(1)

    async def _build(self, partitions: list[int]) -> None:
        s = self.settings
        assert self.consumer is not None
        producers = {p: self._producer(p) for p in partitions}
        await asyncio.gather(*(producer.start() for producer in producers.values()))
        tps = [TopicPartition(topic, p) for p in partitions for topic in s.inputs]
        targets = await self._targets(tps)
        folds = {p: Fold(horizon=s.horizon) for p in partitions}
        started = time.monotonic()
        count = await self._refold(folds, targets)
        for p in partitions:
            folds[p].boards_changed.clear()
            positions = {tp: targets[tp] for tp in tps if tp.partition == p}
            self.tasks[p] = Task(
                partition=p, fold=folds[p], producer=producers[p], positions=positions
            )
            self.metrics.pending[p] = folds[p].pending
        for tp in tps:
            self.consumer.seek(tp, targets[tp])
        log.info(
            "tasks %s ready: %d committed events refolded in %.2f s",
            partitions,
            count,
            time.monotonic() - started,
        )

    def _producer(self, partition: int) -> AIOKafkaProducer:
        s = self.settings
        return AIOKafkaProducer(
            bootstrap_servers=s.kafka_bootstrap,
            client_id=f"{s.transactional_prefix}-{partition}",
            transactional_id=f"{s.transactional_prefix}-{partition}",
            enable_idempotence=True,
            acks="all",
            linger_ms=0,
            max_batch_size=1024 * 1024,
            max_request_size=MAX_REQUEST,
            request_timeout_ms=30000,
        )

    async def _targets(self, tps: list[TopicPartition]) -> dict[TopicPartition, int]:
        """Where each input partition resumes: its committed offset, else its beginning."""
        assert self.consumer is not None
        beginnings = await self.consumer.beginning_offsets(tps)
        targets: dict[TopicPartition, int] = {}
        for tp in tps:
            committed = await self.consumer.committed(tp)
            targets[tp] = committed if committed is not None else beginnings[tp]
        return targets

    async def _refold(self, folds: dict[int, Fold], targets: dict[TopicPartition, int]) -> int:
        """Feed every committed event below the targets to the folds, discarding the records."""
        wanted = [tp for tp, target in targets.items() if target > 0]
        if not wanted:
            return 0
        reader = AIOKafkaConsumer(
            bootstrap_servers=self.settings.kafka_bootstrap,
            group_id=None,
            enable_auto_commit=False,
            isolation_level="read_committed",
            max_partition_fetch_bytes=4 * 1024 * 1024,
            fetch_max_bytes=32 * 1024 * 1024,
        )
        await reader.start()
        count = 0
        try:
            reader.assign(wanted)
            await reader.seek_to_beginning(*wanted)
            open_ = {tp for tp in wanted if await reader.position(tp) < targets[tp]}
            while open_:
                batch = await reader.getmany(*open_, timeout_ms=500, max_records=20000)
                for tp in sorted(batch, key=lambda tp: tp.topic != self.settings.topic_rounds):
                    kind = self.topic_kind[tp.topic]
                    fold = folds[tp.partition]
                    for record in batch[tp]:
                        if record.offset < targets[tp]:
                            fold.feed(kind, record.value)
                            count += 1
                for tp in list(open_):
                    if await reader.position(tp) >= targets[tp]:
                        open_.discard(tp)
        finally:
            await reader.stop()
        return count


class _Listener(ConsumerRebalanceListener):  # type: ignore[misc]
    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    async def on_partitions_revoked(self, revoked: list[TopicPartition]) -> None:
        await self.engine.revoked(tp.partition for tp in revoked)

    async def on_partitions_assigned(self, assigned: list[TopicPartition]) -> None:
        mine = {tp.partition for tp in assigned}
        inputs = set(self.engine.settings.inputs)
        for p in mine:
            have = {tp.topic for tp in assigned if tp.partition == p}
            if have != inputs:
                log.error(
                    "partition %d assigned for %s only: rounds and bets must be co-partitioned",
                    p,
                    have,
                )
        await self.engine.assigned(mine)
