"""How far the database is behind the topics: committed messages not projected yet."""

from __future__ import annotations

import asyncio
import logging

from aiokafka import AIOKafkaConsumer, TopicPartition  # type: ignore[import-untyped]
from aiokafka.errors import KafkaError  # type: ignore[import-untyped]

from services.history.projector import partitions_of, sources
from services.history.queries import Reads
from services.security import clients
from services.settings import Settings

log = logging.getLogger("croupier.lag")


class Lag:
    """The committed end of every partition (its last stable offset) less the stored position."""

    def __init__(self, settings: Settings, reads: Reads) -> None:
        self.settings = settings
        self.reads = reads
        self.consumer: AIOKafkaConsumer | None = None
        self.partitions: list[TopicPartition] = []
        self.stopping = asyncio.Event()

    async def run(self) -> None:
        """Find the partitions, then keep a consumer open for the end offsets until stopped."""
        s = self.settings
        found = await partitions_of(s, sorted(sources(s)), self.stopping)
        if found is None:
            return
        consumer = AIOKafkaConsumer(
            **clients.aiokafka(s),
            group_id=None,
            client_id=f"{s.group_id}-api",
            enable_auto_commit=False,
            isolation_level="read_committed",
        )
        await consumer.start()
        self.consumer, self.partitions = consumer, found
        try:
            await self.stopping.wait()
        finally:
            self.consumer, self.partitions = None, []
            await consumer.stop()

    def stop(self) -> None:
        self.stopping.set()

    async def __call__(self) -> int | None:
        """Messages behind; None while the topics or the projector's positions are not there."""
        consumer, partitions = self.consumer, self.partitions
        if consumer is None or not partitions:
            return None
        try:
            ends = await consumer.end_offsets(partitions)
        except (TimeoutError, KafkaError, AssertionError) as error:
            log.info("cannot measure the lag (%r)", error)
            return None
        stored = await asyncio.to_thread(self.reads.positions)
        if any((tp.topic, tp.partition) not in stored for tp in partitions):
            return None
        lag: int = sum(max(0, ends[tp] - stored[(tp.topic, tp.partition)]) for tp in partitions)
        return lag
