"""The projector: croupier's committed output into the read side's database, exactly once.

One librdkafka consumer (`read_committed`, in no group: `reading.reader`) is assigned every
partition of the accepted (the workers' journals), table-stats and rejected topics (or, one of
several projectors sharing them, its shard of those partitions: `owned`) at the positions stored in
the database. Each batch is applied in one database transaction together with the positions it
moved to, so a restart resumes exactly after the last committed batch, and a batch is never applied
twice (a redelivery is a position already passed). The next batch is read and decoded while the
database writes the one before; nothing else is kept in memory between batches, so restart time and
memory do not grow with the history. librdkafka's calls block: each read runs in a thread, for at
most 200 ms, so that the event loop (and the API beside it) goes on meanwhile.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple, TypeVar

from confluent_kafka import Consumer, KafkaError, TopicPartition
from confluent_kafka.admin import AdminClient
from sqlalchemy.exc import DBAPIError, OperationalError

from services import collector, reading
from services.history import pacing
from services.history.partitions import (
    REFUSED,
    connected,
    failed,
    kafka,
    owned,
    partitions_of,
    reader,
    sources,
)
from services.history.projection import Changes
from services.history.recreated import ahead
from services.history.store import Conflict, Position, Prepared, Store
from services.settings import Settings

log = logging.getLogger("croupier.projector")
T = TypeVar("T")
PROGRESS_EVERY_S = 30.0
"""How often the projector logs what it projected (at the first batch written after)."""


class Record(NamedTuple):
    """What the projector keeps of a Kafka record (`Changes.feed_all` reads value and timestamp)."""

    offset: int
    timestamp: int
    value: bytes


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
        self.clocks: dict[Position, int | None] = {}
        """The latest timestamp read from each partition (pacing)."""
        self.waiting: dict[Position, list[Record]] = {}
        """Records read past the pacing bound, not fed yet, in offset order per partition."""
        self.reached: dict[Position, int] = {}
        """Where each partition's reading is: after its last record, or at its end once there."""
        self.ended: set[Position] = set()
        """The partitions read to their last stable offset (librdkafka said so) since their last
        record."""
        self.paused: set[Position] = set()
        """The partitions not fetched for now: far enough ahead of the others in Kafka time."""
        self.failed: KafkaError | None = None
        """An error of the consumer it cannot recover from (librdkafka's fatal ones, a login
        refused); the projector stops on it."""
        self.reading: asyncio.Future[list[Any]] | None = None
        self.told: set[int] = set()
        """The errors of the client told since the last record read (not told again)."""

    def stop(self) -> None:
        self.stopping.set()

    async def run(self) -> None:
        """Project until stopped, the cyclic collector on a clock meanwhile (collector.clocked)."""
        async with collector.clocked(self.progress.collections):
            await self._project()

    async def _project(self) -> None:
        s = self.settings
        began = time.monotonic()
        admin = await connected(s, self.stopping, "projector")
        every = (
            None
            if admin is None
            else await partitions_of(s, admin, list(self.roles), self.stopping)
        )
        if admin is None or every is None:
            return
        partitions = owned(every, self.shard)
        found = time.monotonic()
        consumer = reader(s, self._error)
        writing: asyncio.Task[bool] | None = None
        try:
            at = await self._resume(consumer, admin, partitions)
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
                for key in partitions:
                    now = self._position(key)
                    if now != at[key]:
                        moves[key] = (at[key], now)
                if writing is not None and not await writing:
                    writing = None
                    at = await self._resume(consumer, admin, partitions)  # this batch is dropped
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
            if self.reading is not None:
                await asyncio.wait([self.reading])
            await asyncio.to_thread(consumer.close)
            log.info("stopped; projected %s", self.progress.report(0))

    async def _resume(
        self, consumer: Consumer, admin: AdminClient, partitions: list[Position]
    ) -> dict[Position, int]:
        """Assign every partition at its stored position (a new one at its beginning)."""
        beginnings = await kafka(
            self.settings, self.stopping, lambda: reading.offsets(admin, partitions, earliest=True)
        )
        ends = await kafka(
            self.settings, self.stopping, lambda: reading.offsets(admin, partitions, earliest=False)
        )
        stored = await self._database(lambda: self.store.begin_at(beginnings))
        recreated = ahead(stored, ends)
        if recreated is not None:
            raise recreated
        self.reached = {key: max(stored[key], beginnings[key]) for key in partitions}
        consumer.assign([TopicPartition(t, p, self.reached[(t, p)]) for t, p in partitions])
        self.clocks = dict.fromkeys(partitions)
        self.waiting = {}
        self.ended = set()
        self.paused = set()
        return stored

    async def _gather(
        self, consumer: Consumer, writing: asyncio.Future[bool] | None
    ) -> tuple[Prepared, int]:
        """The next batch: what arrives within 100 ms, and for as long as the batch before is
        still being written, up to max_messages inputs and decisions (a transaction costs a
        commit and a dozen statements whatever its size); read in step across partitions by
        timestamp (the partitions ahead are paused), and fed only up to the bound of the
        partitions behind (pacing): the rest waits for the next batch."""
        changes = Changes()
        preparing = self.store.preparing(changes)
        count = 0
        gathering = time.monotonic() + 0.1
        while changes.size < self.max_messages:
            busy = writing is not None and not writing.done()
            left = gathering - time.monotonic()
            if count and not busy and left <= 0:
                break
            self._pace(consumer)
            wait = 0.02 if busy else max(0.0, left) if count else 0.2
            read = self._take(await self._read(consumer, wait))
            fed = self._feed(changes, pacing.bound(self.clocks, self._idle()))
            count += fed
            preparing.take()
            if not read and not fed and not busy:
                break
        return preparing.done(), count

    async def _read(self, consumer: Consumer, wait: float) -> list[Any]:
        """`reading.take` in a thread, shielded: a projector cancelled meanwhile closes the
        consumer only once the read is over (librdkafka's handle is not shared across a close)."""
        loop = asyncio.get_running_loop()
        self.reading = loop.run_in_executor(None, reading.take, consumer, pacing.STEP, wait)
        return await asyncio.shield(self.reading)

    def _pace(self, consumer: Consumer) -> None:
        """Pause the partitions ahead that hold a read's worth of records waiting (pacing.due
        tells the ones behind), and resume them once behind or drained: reading them further
        would only fill memory with records that wait."""
        behind = set(pacing.due(self.clocks, self._idle()))
        hold = [
            key
            for key, records in self.waiting.items()
            if len(records) >= pacing.STEP and key not in behind and key not in self.paused
        ]
        free = [key for key in self.paused if key in behind or not self.waiting.get(key)]
        if hold:
            consumer.pause([TopicPartition(t, p) for t, p in hold])
            self.paused.update(hold)
        if free:
            consumer.resume([TopicPartition(t, p) for t, p in free])
            self.paused.difference_update(free)

    def _take(self, messages: list[Any]) -> int:
        """Keep what a read returned, waiting; how many records that was. The end of a partition
        marks it idle; an error of the consumer is told, or raised when it is for good."""
        waiting, clocks, reached, ended = self.waiting, self.clocks, self.reached, self.ended
        read = 0
        for message in messages:
            error = message.error()
            key = (message.topic(), message.partition())
            if error is None:
                offset: int = message.offset()
                timestamp: int = message.timestamp()[1]
                records = waiting.get(key)
                if records is None:
                    records = waiting[key] = []
                records.append(Record(offset, timestamp, message.value()))
                clock = clocks.get(key)
                if clock is None or timestamp > clock:
                    clocks[key] = timestamp
                reached[key] = offset + 1
                ended.discard(key)
                read += 1
            elif error.code() == KafkaError._PARTITION_EOF:
                reached[key] = max(reached[key], message.offset())
                ended.add(key)
            else:
                self._message_error(message, error)
        if self.failed is not None:
            failed(self.settings, self.failed)
        if read:
            self.told.clear()
        return read

    def _message_error(self, message: Any, error: KafkaError) -> None:
        """An error the consumer returned: a refusal or a fatal error stops the projector; the
        others (a topic deleted under it, a leader moving) are told, and librdkafka goes on."""
        if error.fatal() or error.code() in REFUSED:
            failed(self.settings, error)
        if reading.unused_group(error):
            log.info("the brokers refuse this principal the group id it never uses (%s)", error)
            return
        where = f" {message.topic()}[{message.partition()}]" if message.topic() else ""
        log.warning("reading%s: %s", where, error)

    def _error(self, error: KafkaError) -> None:
        """librdkafka's errors of the client (in the reading thread): a broker down, say, which
        it rides out itself, is told once an outage; a fatal one, or a login refused, stops the
        projector."""
        if error.fatal() or error.code() in REFUSED:
            self.failed = error
        elif error.code() not in self.told:
            self.told.add(error.code())
            log.warning("Kafka: %s (librdkafka tries again)", error)

    def _feed(self, changes: Changes, limit: float) -> int:
        """Feed every partition's waiting records up to `limit`, in offset order; how many."""
        fed = 0
        for key, records in self.waiting.items():
            n = pacing.ready((record.timestamp for record in records), limit)
            if n:
                changes.feed_all(self.roles[key[0]], records[:n])
                del records[:n]
                fed += n
        return fed

    def _position(self, key: Position) -> int:
        """Where this partition's batch ends: its first record read but not fed, if any."""
        records = self.waiting.get(key)
        return records[0].offset if records else self.reached[key]

    def _idle(self) -> list[Position]:
        """The partitions fed up to their last stable offset (as far as the consumer knows)."""
        return [key for key in self.clocks if key in self.ended and not self.waiting.get(key)]

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
