"""The settlement engine: the fold over Kafka, exactly once, one task per input partition number.

Task p owns partition p of `rounds` and of `bets` (co-partitioned by table_id). Each batch of a
task is one Kafka transaction holding its output records, its accepted inputs, the changes of its
fold's state (to partition p of the compacted state topic) and its input offsets
(send_offsets_to_transaction), written by the task's own transactional producer
(transactional.id `<prefix>-<p>`): a new owner's producer fences the old one, so a paused or
partitioned worker can write nothing that survives. A task is restored from its state and folds
only the input committed after it (`recovery.plan` says when it must refold or refuse instead), so
no worker disk is needed and a takeover costs the size of the state, not of the history.
"""

from __future__ import annotations

import asyncio
import io
import logging
import time
from collections.abc import Awaitable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition  # type: ignore[import-untyped]
from aiokafka.abc import ConsumerRebalanceListener  # type: ignore[import-untyped]
from aiokafka.coordinator.assignors.range import RangePartitionAssignor  # type: ignore[import-untyped]
from aiokafka.errors import KafkaError, ProducerFenced  # type: ignore[import-untyped]
from aiokafka.structs import OffsetAndMetadata  # type: ignore[import-untyped]

from schemas.codec import encode
from schemas.journal import records as journal_records
from schemas.records import Adjustment, Record, Refund, Rejected, Settlement, TableStats
from services import collector
from services.security import clients
from services.security.denied import AccessDenied
from services.security.login import Unreachable, login
from services.settings import Settings
from services.settlement import aio_changelog as changelog
from services.settlement import capture, group, state
from services.settlement.changelog import Log
from services.settlement.fold import Fold
from services.settlement.metrics import Metrics
from services.settlement.outbox import Message, Partitioner, send_all
from services.settlement.recovery import ROLES, Blocked, Refold, Restored, Start, plan
from services.settlement.rounds import Journal
from services.signing.keys import load as load_keys
from services.topics import broker_errors, ensure_async

log = logging.getLogger("croupier.engine")
T = TypeVar("T")
MAX_REQUEST = 16 * 1024 * 1024
BLOCKED_RETRY = 30.0
"""Seconds between two attempts to start a blocked task."""
REWRITE_BYTES = 2 * 1024 * 1024
REWRITE_RECORDS = 5_000
"""A task writes its whole state again (a part in each transaction, `capture.Rewrite`) once it wrote
more than these, or more than the last rewrite wrote, since that rewrite: a restore then reads
about twice the live state at most, whatever the history (docs/DESIGN.md, "Durable state")."""
IDLE = 1.0
"""Seconds without input after which a task's rewrite in progress goes on in transactions of its
own, IDLE_CREDIT bytes each, so that it completes when the input stops."""
IDLE_CREDIT = 1024 * 1024


@dataclass(kw_only=True)
class Task:
    """Partition p of rounds and bets: its fold, its producer, and the next offsets to read."""

    partition: int
    fold: Fold
    producer: AIOKafkaProducer
    positions: dict[TopicPartition, int] = field(default_factory=dict)
    stale: frozenset[bytes] | None = None
    """Set after a refold: the next transaction writes the whole state and tombstones these keys."""
    ready_at: float | None = None
    """When the task was (re)built, until its first transaction is committed (logged then)."""
    state_end: int | None = None
    """The offset after the last state record committed (None: not known, no rewrite starts)."""
    snapshot: int = 0
    """Where a restore of this task starts reading its state partition (its position records')."""
    rewrite: capture.Rewrite | None = None
    tail: tuple[int, int] = (0, 0)
    """State records and bytes written since the last whole rewrite completed (or left unread)."""
    live: tuple[int, int] = (0, 0)
    """Records and bytes the last whole rewrite wrote (or the live state restored)."""
    writing: tuple[int, int] = (0, 0)
    """State records and bytes of the transaction being written."""


class Engine:
    """Consume rounds and bets, fold them, and commit outputs with offsets, batch by batch."""

    def __init__(self, settings: Settings, metrics: Metrics | None = None) -> None:
        self.settings = settings
        self.metrics = metrics or Metrics()
        self.tasks: dict[int, Task] = {}
        self.blocked: dict[int, str] = {}
        self.blocked_at = 0.0
        self.fenced: dict[int, float] = {}
        self.lock = asyncio.Lock()
        self.partitioner = Partitioner()
        self.partitions: dict[str, int] = {}
        self.consumer: AIOKafkaConsumer | None = None
        self.stopping = asyncio.Event()
        self.topic_kind = {settings.topic_rounds: "rounds", settings.topic_bets: "bets"}
        self.decision_topics = {
            settings.topic_settlements,
            settings.topic_refunds,
            settings.topic_adjustments,
        }
        self.denied: AccessDenied | None = None
        """Set when the brokers refused this worker's principal: it stops, and says why."""
        self.keys = load_keys(settings.table_keys_file)
        """Read once, at start: a changed keys file takes effect when the worker restarts."""

    async def run(self) -> None:
        """Process until stop() is called; every failure of a task is recovered in place, except
        a refusal of the brokers (authentication or a missing ACL), which stops the engine with
        an AccessDenied that names the principal, the resource and the permission."""
        try:
            await self._run()
        except AccessDenied as error:
            self._deny(error)
        except Exception as error:
            denied = self._explain(error)
            if denied is None:
                raise
            self._deny(denied)

    def _explain(self, error: BaseException) -> AccessDenied | None:
        ids = f"transactional ids {self.settings.transactional_prefix}-<p>"
        return group.refusal(self.settings, error, ids)

    def _deny(self, denied: AccessDenied) -> None:
        self.denied = denied
        self.stopping.set()
        log.critical("refused by the brokers, stopping: %s", denied)
        raise denied

    async def _login(self) -> None:
        """Log in once before anything else; a broker not up yet is waited for."""
        while True:
            try:
                return await login(self.settings)
            except Unreachable as error:
                if self.stopping.is_set():
                    raise
                log.warning("%s; retrying in 1 s", error)
                await asyncio.sleep(1)

    async def _run(self) -> None:
        s = self.settings
        await self._login()
        problems = await self._ensure_topics()
        if problems:
            raise RuntimeError("; ".join(problems))
        self.consumer = AIOKafkaConsumer(
            **clients.aiokafka(s),
            group_id=s.group_id,
            client_id=f"{s.group_id}-consumer",
            enable_auto_commit=False,
            isolation_level="read_committed",
            auto_offset_reset="earliest",
            partition_assignment_strategy=(RangePartitionAssignor,),
            group_instance_id=s.instance_id,
            session_timeout_ms=s.session_timeout_ms,
            heartbeat_interval_ms=max(100, s.session_timeout_ms // 3),
            max_partition_fetch_bytes=4 * 1024 * 1024,
            fetch_max_bytes=16 * 1024 * 1024,
        )
        self.consumer.subscribe(list(s.inputs), listener=_Listener(self))
        await self.consumer.start()
        try:
            await self._partition_counts()
            idle = time.monotonic()
            while not self.stopping.is_set():
                batch = await self.consumer.getmany(timeout_ms=200, max_records=s.batch_records)
                if batch:
                    idle = time.monotonic()
                    async with self.lock:
                        await self._process(batch)
                elif time.monotonic() - idle > IDLE:
                    async with self.lock:
                        await self._rewrite_idle()
                if self.fenced:
                    await self._reclaim()
                if self.blocked:
                    await self._retry_blocked()
        finally:
            async with self.lock:
                await self._drop(list(self.tasks))
            await self.consumer.stop()
        if self.denied is not None:
            raise self.denied

    async def _ensure_topics(self) -> list[str]:
        """Create or check the topics; a broker not answering yet is waited for, not fatal."""
        while True:
            try:
                return await ensure_async(self.settings, io.StringIO(), logged_in=True)
            except broker_errors() as error:
                if self.stopping.is_set() or self._explain(error) is not None:
                    raise
                log.warning("topics: broker not reachable (%r); retrying in 1 s", error)
                await asyncio.sleep(1)

    def stop(self) -> None:
        self.stopping.set()

    def transactional_id_of(self, task: int) -> str:
        """The transactional id that commits task `task`: its own."""
        return f"{self.settings.transactional_prefix}-{task}"

    async def _partition_counts(self) -> None:
        while True:
            try:
                return await self._count_partitions()
            except (KafkaError, OSError) as error:
                if self.stopping.is_set() or self._explain(error) is not None:
                    raise
                log.warning("output partitions: broker not reachable (%r); retrying in 1 s", error)
                await asyncio.sleep(1)

    async def _count_partitions(self) -> None:
        s = self.settings
        producer = AIOKafkaProducer(**clients.aiokafka(s))
        await producer.start()
        try:
            for topic in (*s.inputs, *s.outputs, s.topic_state):
                self.partitions[topic] = len(await producer.partitions_for(topic))
        finally:
            await producer.stop()
        inputs = self.partitions[s.topic_rounds]
        for topic in (s.topic_accepted, s.topic_state):
            if self.partitions[topic] < inputs:
                raise RuntimeError(
                    f"{topic} has {self.partitions[topic]} partitions and {s.topic_rounds} "
                    f"{inputs}: task p writes partition p of it; add partitions to {topic} "
                    "(kafka-topics --alter --partitions) before starting workers"
                )

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
        messages: list[Message] = []
        offsets: dict[TopicPartition, int] = {}
        items.sort(key=lambda item: item[0].topic != self.settings.topic_rounds)
        p = task.partition
        for tp, records in items:
            kind = self.topic_kind[tp.topic]
            self.metrics.events_in[tp.topic] += len(records)
            for record in records:
                for out in task.fold.feed(kind, record.value):
                    messages.append(self._message(out, record.key, p))
            offsets[tp] = records[-1].offset + 1
        for table_id in sorted(task.fold.boards_changed):
            stats = task.fold.stats(table_id)
            if stats is not None:
                messages.append(self._message(stats, table_id.encode(), p))
        task.fold.boards_changed.clear()
        # The journal goes first, the accepted inputs before the decisions (see schemas/journal).
        decided = [m[3] for m in messages if m[0] in self.decision_topics and m[3] is not None]
        messages[:0] = self._journal(task, {**task.positions, **offsets}, decided=decided)
        folded = time.monotonic()
        try:
            sent, ends = await self._transaction(task, messages, offsets)
        except ProducerFenced:
            log.warning("task %d: fenced by a newer owner; leaving it", task.partition)
            await self._drop([task.partition])
            self.fenced[task.partition] = time.monotonic()
            return
        except Exception as error:  # any failure of the transaction: the committed state is safe
            denied = self._explain(error)
            if denied is not None:
                raise denied from error
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
        task.stale = None
        self._committed_state(task, ends)
        done = time.monotonic()
        self.metrics.committed(messages_out=len(messages), seconds=done - started)
        if task.ready_at is not None:
            log.info(
                "task %d: first transaction %.2f s after ready: %d records out, fold %.0f ms, "
                "send %.0f ms, commit %.0f ms",
                task.partition,
                done - task.ready_at,
                len(messages),
                (folded - started) * 1000,
                (sent - folded) * 1000,
                (done - sent) * 1000,
            )
            task.ready_at = None
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

    def _message(self, record: Record, key: bytes | None, task: int) -> Message:
        s = self.settings
        match record:
            case Settlement():
                self.metrics.decisions["settlement"] += 1
                return self._keyed(s.topic_settlements, record.player_id.encode(), encode(record))
            case Refund():
                self.metrics.decisions[f"refund:{record.reason}"] += 1
                return self._keyed(s.topic_refunds, record.player_id.encode(), encode(record))
            case Adjustment():
                self.metrics.decisions[f"adjustment:{record.cause}"] += 1
                return self._keyed(s.topic_adjustments, record.player_id.encode(), encode(record))
            case Rejected():
                self.metrics.rejections[record.reason] += 1
                return self._keyed(s.topic_rejected, key, encode(record), fallback=task)
            case TableStats():
                return self._keyed(s.topic_table_stats, key, encode(record))

    def _keyed(self, topic: str, key: bytes | None, value: bytes, fallback: int = 0) -> Message:
        """A record to the partition Kafka's default partitioner gives its key."""
        return (topic, self.partitioner(key, self.partitions[topic], fallback), key, value)

    async def _rewrite_idle(self) -> None:
        """Without input, a rewrite in progress goes on in a transaction of its own."""
        for task in list(self.tasks.values()):
            if task.rewrite is None or task.stale is not None:
                continue
            messages = self._journal(task, task.positions, IDLE_CREDIT)
            try:
                _, ends = await self._transaction(task, messages, {})
            except ProducerFenced:
                log.warning("task %d: fenced by a newer owner; leaving it", task.partition)
                await self._drop([task.partition])
                self.fenced[task.partition] = time.monotonic()
                continue
            except Exception as error:  # as in _commit: rebuilt from what was committed
                log.warning("task %d: rewrite failed (%r); rebuilding", task.partition, error)
                await self._abort(task)
                await self._recover([task.partition])
                continue
            self._committed_state(task, ends)

    def _journal(
        self,
        task: Task,
        positions: dict[TopicPartition, int],
        credit: int = 0,
        decided: Sequence[bytes] = (),
    ) -> list[Message]:
        """The batch's journal (its accepted inputs and the decisions it commits, for the read
        side) and its state changes, to partition p of their topics."""
        s = self.settings
        p = task.partition
        journal = task.fold.journal
        assert journal is not None
        inputs = [raw for _, raw in journal.accepted]
        messages: list[Message] = [
            (s.topic_accepted, p, None, value) for value in journal_records(inputs, decided)
        ]
        journal.accepted.clear()
        if not s.durable_state:
            journal.clear()
            return messages
        snapshot = task.snapshot
        if task.stale is None:
            entries = self._changes(task, credit)
            if task.rewrite is not None and task.rewrite.done:
                snapshot = task.rewrite.start
        else:
            entries = capture.snapshot(task.fold)
            kept = {key for key, _ in entries}
            entries.extend((key, None) for key in sorted(task.stale - kept))
            snapshot = task.state_end or 0
        at = {self.topic_kind[tp.topic]: offset for tp, offset in positions.items()}
        live = capture.count(task.fold)
        entries.append(state.position_entry(at["rounds"], at["bets"], snapshot, live))
        task.writing = (len(entries), sum(len(k) + len(v or b"") for k, v in entries))
        self.metrics.state_written(entries)
        messages.extend((s.topic_state, p, key, value) for key, value in entries)
        return messages

    def _changes(self, task: Task, credit: int) -> list[state.Entry]:
        """What the batch changed in the state, and the next part of a whole rewrite: one starts
        once the tail written since the last one outgrows it (or the floor), and each transaction
        writes at most twice its own changes' bytes of it."""
        entries = capture.changes(task.fold)
        tail_records, tail_bytes = task.tail
        live_records, live_bytes = task.live
        due = tail_records > max(REWRITE_RECORDS, live_records) or tail_bytes > max(
            REWRITE_BYTES, live_bytes
        )
        if task.rewrite is None and due and task.state_end is not None:
            task.rewrite = capture.Rewrite(task.fold, task.state_end)
            task.tail = (0, 0)
        if task.rewrite is None:
            return entries
        size = sum(len(key) + len(value or b"") for key, value in entries)
        merged = dict(entries)
        merged.update(task.rewrite.step(task.fold, 2 * size + 4096 + credit))
        return sorted(merged.items())

    def _committed_state(self, task: Task, ends: dict[tuple[str, int], int]) -> None:
        """A transaction with state records was committed: where the partition ends now, how
        much tail it has, and whether a whole rewrite completed (restores then start there)."""
        if not self.settings.durable_state:
            return
        end = ends.get((self.settings.topic_state, task.partition))
        task.state_end = end if end is not None else task.state_end
        task.tail = (task.tail[0] + task.writing[0], task.tail[1] + task.writing[1])
        task.writing = (0, 0)
        rewrite = task.rewrite
        if rewrite is not None and rewrite.done:
            task.snapshot = rewrite.start
            task.live = (rewrite.records, rewrite.written)
            records, size = task.tail
            task.tail = (max(0, records - rewrite.records), max(0, size - rewrite.written))
            task.rewrite = None
            log.info(
                "task %d: whole state written again (%d records, %d bytes): restores read its "
                "state partition from offset %d",
                task.partition,
                rewrite.records,
                rewrite.written,
                rewrite.start,
            )

    async def _transaction(
        self, task: Task, messages: list[Message], offsets: dict[TopicPartition, int]
    ) -> tuple[float, dict[tuple[str, int], int]]:
        """One transaction of messages and input offsets; returns when the sends were done and
        the offset after the last record sent to each partition."""
        await task.producer.begin_transaction()
        ends = await send_all(task.producer, messages)
        sent = time.monotonic()
        if offsets:
            await task.producer.send_offsets_to_transaction(
                {tp: OffsetAndMetadata(offset, "") for tp, offset in offsets.items()},
                self.settings.group_id,
            )
        await task.producer.commit_transaction()
        return sent, ends

    async def _abort(self, task: Task) -> None:
        try:
            await task.producer.abort_transaction()
        except Exception as error:  # the producer is replaced by _recover anyway
            log.info("task %d: abort failed (%r)", task.partition, error)

    async def assigned(self, partitions: Iterable[int]) -> None:
        """Tasks given back to this worker resume as they are; the others are restored."""
        async with self.lock:
            self.fenced.clear()
            wanted = sorted(set(partitions))
            await self._drop([p for p in self.tasks if p not in wanted])
            for p in list(self.blocked):
                if p not in wanted:
                    del self.blocked[p]
            kept = await self._keep([p for p in wanted if p in self.tasks])
            await self._recover([p for p in wanted if p not in kept])

    async def revoked(self, partitions: Iterable[int]) -> None:
        """Kept until the assignment that follows: a task that stays here needs no restore.

        Nothing is processed between the two (the consumer polls no batch during a rebalance),
        and a task that another worker took meanwhile has a fenced producer, whose next
        transaction fails and is rebuilt.
        """
        async with self.lock:
            self.fenced.clear()

    async def _keep(self, partitions: list[int]) -> set[int]:
        """The tasks whose committed offsets are still where this worker left them."""
        assert self.consumer is not None
        kept: set[int] = set()
        for p in partitions:
            task = self.tasks[p]
            try:
                committed = {tp: await self.consumer.committed(tp) for tp in task.positions}
            except (KafkaError, OSError) as error:
                log.info("task %d: committed offsets unknown (%r); restoring it", p, error)
                continue
            if committed == task.positions:
                for tp, offset in task.positions.items():
                    self.consumer.seek(tp, offset)
                kept.add(p)
        if kept:
            log.info("tasks %s stay here: resumed without a restore", sorted(kept))
        return kept

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
                denied = self._explain(error)
                if denied is not None:  # (in a rebalance callback, which aiokafka would swallow)
                    self.denied = denied
                    self.stopping.set()
                    return
                log.warning("tasks %s: rebuild failed (%r); retrying in 1 s", partitions, error)
                await self._drop(partitions)
                await asyncio.sleep(1)

    async def _build(self, partitions: list[int]) -> None:
        """Fence the tasks' older producers, then restore each task, refold it, or block it."""
        s = self.settings
        assert self.consumer is not None
        started = time.monotonic()
        cpu = time.process_time()
        producers = {p: self._producer(p) for p in partitions}
        await asyncio.gather(*(producer.start() for producer in producers.values()))
        fenced = time.monotonic()
        inputs = {
            p: {r: TopicPartition(t, p) for r, t in zip(ROLES, s.inputs, strict=True)}
            for p in partitions
        }
        (found, offsets), (logs, read) = await asyncio.gather(  # both once the fences are up
            _timed(self._offsets([tp for p in partitions for tp in inputs[p].values()])),
            _timed(self._read_state(partitions)),
        )
        for p, read_log in logs.items():
            if read_log.note is not None:
                log.warning("task %d: %s partition %d: %s", p, s.topic_state, p, read_log.note)
        ready: dict[int, tuple[Fold, dict[str, int], frozenset[bytes] | None]] = {}
        refolds: dict[int, Refold] = {}
        # No collection meanwhile: a restore builds hundreds of thousands of objects that all
        # stay, and each collection would walk them (and the process's other objects) again.
        with collector.paused():
            starts = {p: self._plan(p, logs.get(p), inputs[p], found) for p in partitions}
        for p, start in starts.items():
            match start:
                case Restored():
                    ready[p] = (start.fold, start.positions, None)
                case Refold():
                    refolds[p] = start
                case Blocked():
                    await producers.pop(p).stop()
                    self._block(p, list(inputs[p].values()), start.reason)
        planned = time.monotonic()
        count = await self._refold(
            {p: Fold(horizon=s.horizon, keys=self.keys) for p in refolds},
            {
                tp: (refolds[p].start[r], refolds[p].upto[r])
                for p in refolds
                for r, tp in inputs[p].items()
            },
            ready,
        )
        for p, refold in refolds.items():
            if refold.why is not None:
                log.warning("task %d: refolded from its input: %s", p, refold.why)
            fold = ready[p][0]
            fold.journal = Journal()
            stale = refold.stale if s.durable_state and refold.why is not None else None
            ready[p] = (fold, refold.upto, stale)
        for p, (fold, at, stale) in ready.items():
            fold.boards_changed.clear()
            positions = {tp: at[r] for r, tp in inputs[p].items()}
            task = Task(
                partition=p,
                fold=fold,
                producer=producers[p],
                positions=positions,
                stale=stale,
                ready_at=time.monotonic(),
            )
            found = logs.get(p)
            if found is not None:
                live = (len(found.entries), sum(len(k) + len(v) for k, v in found.entries.items()))
                task.state_end, task.snapshot, task.live = found.end, found.start, live
                task.tail = (max(0, found.records - live[0]), max(0, found.size - live[1]))
            if stale is not None:
                await self._rewrite(task)
            self.tasks[p] = task
            self.blocked.pop(p, None)
            self.metrics.pending[p] = fold.pending
            for tp, offset in positions.items():
                self.consumer.seek(tp, offset)
            self.consumer.resume(*positions)
        self.metrics.blocked = len(self.blocked)
        restored = [logs[p] for p in ready if p in logs and p not in refolds]
        log.info(
            "tasks %s ready: %d state records (%d bytes) restored, %d committed events refolded "
            "in %.2f s (producers fenced %.2f s, offsets %.2f s, state read %.2f s, state decoded "
            "%.2f s, refold and rewrite %.2f s; process cpu %.2f s)",
            sorted(ready),
            sum(found.records for found in restored),
            sum(found.size for found in restored),
            count,
            time.monotonic() - started,
            fenced - started,
            offsets - fenced,
            read - fenced,
            planned - max(offsets, read),
            time.monotonic() - planned,
            time.process_time() - cpu,
        )

    async def _read_state(self, partitions: list[int]) -> dict[int, Log]:
        return (
            await changelog.read(self.settings, partitions) if self.settings.durable_state else {}
        )

    def _plan(
        self,
        p: int,
        found: Log | None,
        inputs: dict[str, TopicPartition],
        offsets: tuple[dict[TopicPartition, int | None], dict[TopicPartition, int]],
    ) -> Start:
        """How task p starts (`recovery.plan`), given its state log and input offsets."""
        s = self.settings
        committed, beginnings = offsets
        return plan(
            None if found is None else found.entries,
            {r: committed[tp] for r, tp in inputs.items()},
            {r: beginnings[tp] for r, tp in inputs.items()},
            horizon=s.horizon,
            partial=s.partial_history,
            state_topic=f"{s.topic_state} partition {p}",
            keys=self.keys,
        )

    async def _rewrite(self, task: Task) -> None:
        """Write a refolded task's whole state now, so that the next takeover restores it."""
        messages = self._journal(task, task.positions)
        _, ends = await self._transaction(task, messages, task.positions)
        task.stale = None
        task.snapshot, task.live, task.tail = task.state_end or 0, task.writing, (0, 0)
        task.state_end = ends.get((self.settings.topic_state, task.partition), task.state_end)
        task.writing = (0, 0)
        log.info("task %d: whole state written (%d records)", task.partition, len(messages))

    def _block(self, p: int, tps: list[TopicPartition], reason: str) -> None:
        """Leave a task unprocessed, loudly, until its state or input is repaired."""
        assert self.consumer is not None
        self.consumer.pause(*tps)
        if self.blocked.get(p) != reason:
            log.error("task %d blocked, nothing of it is settled: %s", p, reason)
        self.blocked[p] = reason
        self.blocked_at = time.monotonic()
        self.metrics.blocked = len(self.blocked)

    async def _retry_blocked(self) -> None:
        """Try blocked tasks again now and then: the operator may have repaired them."""
        assert self.consumer is not None
        if time.monotonic() - self.blocked_at < BLOCKED_RETRY:
            return
        self.blocked_at = time.monotonic()
        mine = {tp.partition for tp in self.consumer.assignment()}
        async with self.lock:
            again = sorted(p for p in self.blocked if p in mine and p not in self.tasks)
            if again:
                await self._recover(again)

    def _producer(self, partition: int) -> AIOKafkaProducer:
        s = self.settings
        return AIOKafkaProducer(
            **clients.aiokafka(s),
            client_id=f"{s.transactional_prefix}-{partition}",
            transactional_id=f"{s.transactional_prefix}-{partition}",
            enable_idempotence=True,
            acks="all",
            linger_ms=0,
            max_batch_size=1024 * 1024,
            max_request_size=MAX_REQUEST,
            request_timeout_ms=30000,
        )

    async def _offsets(
        self, tps: list[TopicPartition]
    ) -> tuple[dict[TopicPartition, int | None], dict[TopicPartition, int]]:
        """The offsets the group committed for each input partition (None: none), and the first
        offset each still holds."""
        assert self.consumer is not None
        consumer = self.consumer
        beginnings, *found = await asyncio.gather(
            consumer.beginning_offsets(tps), *(consumer.committed(tp) for tp in tps)
        )
        return dict(zip(tps, found, strict=True)), beginnings

    async def _refold(
        self,
        folds: dict[int, Fold],
        spans: dict[TopicPartition, tuple[int, int]],
        ready: dict[int, tuple[Fold, dict[str, int], frozenset[bytes] | None]],
    ) -> int:
        """Feed the committed events of each span (start, end) to the folds, discarding the
        records; the folds join `ready`."""
        for p, fold in folds.items():
            ready[p] = (fold, {}, None)
        wanted = [tp for tp, (start, end) in spans.items() if end > start]
        if not wanted:
            return 0
        reader = AIOKafkaConsumer(
            **clients.aiokafka(self.settings),
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
            for tp in wanted:
                reader.seek(tp, spans[tp][0])
            open_ = set(wanted)
            while open_:
                batch = await reader.getmany(*open_, timeout_ms=500, max_records=20000)
                for tp in sorted(batch, key=lambda tp: tp.topic != self.settings.topic_rounds):
                    kind = self.topic_kind[tp.topic]
                    fold = folds[tp.partition]
                    end = spans[tp][1]
                    for record in batch[tp]:
                        if record.offset < end:
                            fold.feed(kind, record.value)
                            count += 1
                for tp in list(open_):
                    if await reader.position(tp) >= spans[tp][1]:
                        open_.discard(tp)
        finally:
            await reader.stop()
        return count


async def _timed(awaitable: Awaitable[T]) -> tuple[T, float]:
    """What the awaitable gives, and when it was done."""
    return await awaitable, time.monotonic()


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
