"""The projector: croupier's committed output into the read side's database, exactly once.

One aiokafka consumer (`read_committed`, no group) is assigned every partition of the accepted
(the workers' journals), table-stats and rejected topics (or, one of several projectors sharing
them, its shard of those partitions: `owned`) and seeks to the positions stored in the database.
Each batch is applied in one database transaction together with the positions it moved to, so a
restart resumes exactly after the last committed batch, and a batch is never applied twice (a
redelivery is a position already passed). The next batch is read and decoded while the database
writes the one before; nothing else is kept in memory between batches, so restart time and
memory do not grow with the history.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from aiokafka import (  # type: ignore[import-untyped]
    AIOKafkaConsumer,
    ConsumerRecord,
    TopicPartition,
)
from aiokafka.admin import AIOKafkaAdminClient  # type: ignore[import-untyped]
from aiokafka.errors import KafkaError  # type: ignore[import-untyped]
from sqlalchemy.exc import DBAPIError, OperationalError

from services import collector
from services.history import pacing
from services.history.projection import SOURCES, Changes, Source
from services.history.recreated import ahead
from services.history.store import Conflict, Position, Prepared, Store
from services.security import clients
from services.security.denied import TOPIC_AUTHORIZATION_FAILED, AccessDenied
from services.security.login import Unreachable, login
from services.settings import Settings

log = logging.getLogger("croupier.projector")
T = TypeVar("T")
PROGRESS_EVERY_S = 30.0
"""How often the projector logs what it projected (at the first batch written after)."""


def sources(settings: Settings) -> dict[str, Source]:
    """The topic name of each input of the projector."""
    return dict(zip(settings.projected, SOURCES, strict=True))


async def partitions_of(
    settings: Settings, topics: list[str], stopping: asyncio.Event
) -> list[TopicPartition] | None:
    """Every partition of the topics, waiting (and saying so) while some do not exist; a
    refusal of the brokers (login, or a topic this principal may not describe) is AccessDenied."""
    while not stopping.is_set():
        try:
            await login(settings)
            break
        except Unreachable as error:
            log.warning("%s; retrying", error)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stopping.wait(), timeout=2)
    admin = AIOKafkaAdminClient(**clients.aiokafka(settings))
    while not stopping.is_set():
        try:
            await admin.start()
            break
        except (KafkaError, OSError) as error:
            log.warning("cannot reach Kafka at %s (%r); retrying", settings.kafka_bootstrap, error)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stopping.wait(), timeout=2)
    try:
        while not stopping.is_set():
            found: dict[str, list[int]] = {}
            try:
                described = await admin.describe_topics(sorted(topics))
                refused = [
                    m["topic"] for m in described if m["error_code"] == TOPIC_AUTHORIZATION_FAILED
                ]
                if refused:
                    who = clients.principal(settings)
                    raise AccessDenied(
                        f"{who} is not allowed to project the read side: the brokers refused "
                        f"Describe and Read on topics {', '.join(sorted(refused))}; run it as the "
                        "readside role (.data/kafka/clients/readside.env), or have the operator "
                        "grant it in services/roles.py (`croupier acls`, as admin)",
                        principal=who,
                    )
                for meta in described:
                    if meta["error_code"] == 0 and meta["partitions"]:
                        found[meta["topic"]] = sorted(p["partition"] for p in meta["partitions"])
            except KafkaError as error:
                log.warning("cannot describe the topics (%r); retrying", error)
            missing = sorted(set(topics) - set(found))
            if not missing:
                return [TopicPartition(t, p) for t, parts in sorted(found.items()) for p in parts]
            log.warning("topics %s do not exist yet (run `croupier topics`); waiting", missing)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stopping.wait(), timeout=2)
        return None
    finally:
        await admin.close()


def owned(partitions: list[TopicPartition], shard: tuple[int, int]) -> list[TopicPartition]:
    """The partitions shard `i` of `n` projects: those numbered i modulo n, of every topic (a
    table's journals and board have the same number, so one shard has all of a table)."""
    index, count = shard
    return [tp for tp in partitions if tp.partition % count == index]


@dataclass
class Progress:
    """What the projector did since it started (for logs and the benchmark)."""

    batches: int = 0
    messages: int = 0
    rows: int = 0
    halves: int = 0
    """Halves written apart, their bet's other half in another batch (a pending row, or a
    decision merged into its row): the dear path; the rest were whole rows."""
    conflicts: int = 0
    unreadable: int = 0
    collections: collector.Collections = field(default_factory=collector.Collections)
    started: float = field(default_factory=time.monotonic)
    said: tuple[float, int] = field(default_factory=lambda: (time.monotonic(), 0))
    """When `report` last spoke, and the messages by then."""

    def report(self, every: float) -> str | None:
        """What was projected since the last report, once `every` seconds have passed."""
        now = time.monotonic()
        when, messages = self.said
        if now - when < every:
            return None
        self.said = (now, self.messages)
        rate = (self.messages - messages) / max(now - when, 1e-6)
        c = self.collections
        return (
            f"{self.batches:,} batches, {self.messages:,} messages ({rate:,.0f}/s lately), "
            f"{self.rows:,} halves of bets ({self.halves:,} written apart), "
            f"{self.unreadable:,} unreadable skipped, {self.conflicts:,} conflicts; "
            f"{c.runs:,} collections of cycles in {c.seconds:.2f} s ({c.freed:,} objects freed)"
        )


class Projector:
    """Follow the topics into the store, batch by batch, until stopped."""

    def __init__(
        self,
        settings: Settings,
        store: Store,
        *,
        max_messages: int = 200_000,
        shard: tuple[int, int] = (0, 1),
    ) -> None:
        self.settings = settings
        self.shard = shard
        self.store = store
        self.roles = sources(settings)
        self.max_messages = max_messages
        self.stopping = asyncio.Event()
        self.progress = Progress()
        self.ready = asyncio.Event()
        self.clocks: dict[TopicPartition, int | None] = {}
        """The latest timestamp read from each partition (pacing)."""
        self.waiting: dict[TopicPartition, list[ConsumerRecord[bytes, bytes]]] = {}
        """Records read past the pacing bound, not fed yet, in offset order per partition."""

    def stop(self) -> None:
        self.stopping.set()

    async def run(self) -> None:
        """Project until stopped, the cyclic collector on a clock meanwhile (collector.clocked)."""
        async with collector.clocked(self.progress.collections):
            await self._project()

    async def _project(self) -> None:
        s = self.settings
        consumer = AIOKafkaConsumer(
            **clients.aiokafka(s),
            group_id=None,
            client_id=f"{s.group_id}-projector",
            enable_auto_commit=False,
            isolation_level="read_committed",
            auto_offset_reset="earliest",
            max_partition_fetch_bytes=4 * 1024 * 1024,
            fetch_max_bytes=32 * 1024 * 1024,
        )
        began = time.monotonic()
        every = await partitions_of(s, sorted(self.roles), self.stopping)
        if every is None:
            return
        partitions = owned(every, self.shard)
        found = time.monotonic()
        await consumer.start()
        writing: asyncio.Task[bool] | None = None
        try:
            consumer.assign(partitions)
            at = await self._resume(consumer, partitions)
            self.ready.set()
            log.info(
                "projecting %d partitions of %s, shard %d of %d (topics found in %.2f s, consumer "
                "started and positions resumed in %.2f s)",
                len(partitions),
                sorted(self.roles),
                self.shard[0],
                self.shard[1],
                found - began,
                time.monotonic() - found,
            )
            while not self.stopping.is_set():
                # The next batch is read while the database writes the one before (two cores
                # busy, not one after the other); it starts from where that one ends.
                # Its rows are encoded as they become whole, still beside the write before (the
                # writing thread then only ships them: the database's work is the one left in
                # line, and waits for no encoding when the write before ends).
                batch, count = await self._gather(consumer, writing)
                moves: dict[Position, tuple[int, int]] = {}
                for tp in partitions:
                    key = (tp.topic, tp.partition)
                    now = await self._position(consumer, tp)
                    if now != at[key]:
                        moves[key] = (at[key], now)
                if writing is not None and not await writing:
                    writing = None
                    at = await self._resume(consumer, partitions)  # this batch is dropped
                    continue
                writing = None
                if moves:
                    writing = asyncio.ensure_future(self._write(batch, moves, count))
                    at = {**at, **{key: new for key, (_, new) in moves.items()}}
            if writing is not None:
                await writing
        finally:
            if writing is not None and not writing.done():
                writing.cancel()
                with contextlib.suppress(BaseException):
                    await writing
            await consumer.stop()
            log.info("stopped; projected %s", self.progress.report(0))

    async def _resume(
        self, consumer: AIOKafkaConsumer, partitions: list[TopicPartition]
    ) -> dict[Position, int]:
        """Seek every partition to its stored position (a new one to its beginning)."""
        beginnings = await consumer.beginning_offsets(partitions)
        ends = await consumer.end_offsets(partitions)
        wanted = {(tp.topic, tp.partition): beginnings[tp] for tp in partitions}
        stored = await self._database(lambda: self.store.begin_at(wanted))
        recreated = ahead(stored, {(tp.topic, tp.partition): end for tp, end in ends.items()})
        if recreated is not None:
            raise recreated
        for tp in partitions:
            consumer.seek(tp, max(stored[(tp.topic, tp.partition)], beginnings[tp]))
        self.clocks = dict.fromkeys(partitions)
        self.waiting = {}
        return stored

    async def _gather(
        self, consumer: AIOKafkaConsumer, writing: asyncio.Future[bool] | None
    ) -> tuple[Prepared, int]:
        """The next batch: what arrives within 100 ms, and for as long as the batch before is
        still being written, up to max_messages inputs and decisions (a transaction costs a
        commit and a dozen statements whatever its size); read in step across partitions by
        timestamp, and fed only up to the bound of the partitions behind (pacing): the rest
        waits for the next batch."""
        changes = Changes()
        preparing = self.store.preparing(changes)
        clocks, waiting = self.clocks, self.waiting
        count = 0
        gathering = time.monotonic() + 0.1
        everything = False
        while changes.size < self.max_messages:
            busy = writing is not None and not writing.done()
            left = int((gathering - time.monotonic()) * 1000)
            if count and not busy and left <= 0:
                break
            wait = 20 if busy else max(0, left) if count else 200
            idle = await self._idle(consumer)
            chosen = [
                tp
                for tp in (list(clocks) if everything else pacing.due(clocks, idle))
                if not waiting.get(tp)
            ]
            batch = (
                await consumer.getmany(*chosen, timeout_ms=wait, max_records=pacing.STEP)
                if chosen
                else {}
            )
            for tp, records in batch.items():
                if records:
                    waiting.setdefault(tp, []).extend(records)
                    latest = max(record.timestamp for record in records)
                    clocks[tp] = max(latest, clocks[tp] or latest)
            fed = self._feed(changes, pacing.bound(clocks, await self._idle(consumer)))
            count += fed
            preparing.take()
            # Nothing came from the partitions behind: read from all before deciding again.
            everything = not batch and len(chosen) < len(clocks)
            if not batch and not fed and not busy and not everything:
                break
        return preparing.done(), count

    def _feed(self, changes: Changes, limit: float) -> int:
        """Feed every partition's waiting records up to `limit`, in offset order; how many."""
        fed = 0
        for tp, records in self.waiting.items():
            n = pacing.ready((record.timestamp for record in records), limit)
            if n:
                changes.feed_all(self.roles[tp.topic], records[:n])
                del records[:n]
                fed += n
        return fed

    async def _position(self, consumer: AIOKafkaConsumer, tp: TopicPartition) -> int:
        """Where this partition's batch ends: its first record read but not fed, if any."""
        records = self.waiting.get(tp)
        if records:
            offset: int = records[0].offset
            return offset
        position: int = await consumer.position(tp)
        return position

    async def _idle(self, consumer: AIOKafkaConsumer) -> list[TopicPartition]:
        """The partitions fed up to their last stable offset (as far as the consumer knows)."""
        idle = []
        for tp in self.clocks:
            end = consumer.last_stable_offset(tp)
            if end is not None and not self.waiting.get(tp) and await consumer.position(tp) >= end:
                idle.append(tp)
        return idle

    async def _write(
        self, batch: Prepared, moves: dict[Position, tuple[int, int]], count: int
    ) -> bool:
        """Apply a batch; False when another projector moved the positions (nothing written)."""
        changes = batch.changes
        for problem in changes.unreadable[:10]:
            log.error("skipped a committed message that does not decode: %s", problem)
        try:
            await self._database(lambda: self.store.write(batch, moves))
        except Conflict as conflict:
            self.progress.conflicts += 1
            log.warning("%s; resuming from the stored positions", conflict)
            return False
        p = self.progress
        p.batches += 1
        p.messages += count
        p.rows += changes.bets_read
        p.unreadable += len(changes.unreadable)
        p.halves += len(batch.placed) + len(batch.parts)
        if (said := p.report(PROGRESS_EVERY_S)) is not None:
            log.info("projected %s", said)
        return True

    async def _database(self, call: Callable[[], T]) -> T:
        """Run a database call off the event loop, retrying every second while it is down.

        A transaction that failed was rolled back and its positions did not move, so running it
        again is safe; one that committed although its answer was lost is refused by the
        positions (Conflict), and the projector resumes from them.
        """
        while True:
            try:
                return await asyncio.to_thread(call)
            except DBAPIError as error:
                lost = isinstance(error, OperationalError) or error.connection_invalidated
                if not lost or self.stopping.is_set():
                    raise
                first = str(error).splitlines()[0]
                log.warning("database unavailable (%s); retrying in 1 s", first)
                await asyncio.sleep(1)
