"""Keep a projection up to date from the topics: one consumer, every partition, from the start.

The read side has no state of its own on disk or in Kafka: on every start it reads the six topics
from their beginning (committed records only) and folds them, then follows them. The projection is
idempotent, so reading a record again is harmless.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from aiokafka import AIOKafkaConsumer, TopicPartition  # type: ignore[import-untyped]
from aiokafka.admin import AIOKafkaAdminClient  # type: ignore[import-untyped]
from aiokafka.errors import KafkaError  # type: ignore[import-untyped]

from services.history.projection import Projection, Source
from services.settings import Settings

log = logging.getLogger("croupier.history")


def sources(settings: Settings) -> dict[str, Source]:
    """The topic name of each input of the read side."""
    return {
        settings.topic_rounds: "rounds",
        settings.topic_bets: "bets",
        settings.topic_settlements: "settlements",
        settings.topic_refunds: "refunds",
        settings.topic_table_stats: "table-stats",
        settings.topic_rejected: "rejected",
    }


class Reader:
    """Consume every partition of the read side's topics into a projection, until stopped."""

    def __init__(self, settings: Settings, projection: Projection) -> None:
        self.settings = settings
        self.projection = projection
        self.roles = sources(settings)
        self.partitions: list[TopicPartition] = []
        self.consumer: AIOKafkaConsumer | None = None
        self.stopping = asyncio.Event()

    async def run(self) -> None:
        s = self.settings
        self.consumer = consumer = AIOKafkaConsumer(
            bootstrap_servers=s.kafka_bootstrap,
            group_id=None,
            client_id=f"{s.group_id}-history",
            enable_auto_commit=False,
            isolation_level="read_committed",
            auto_offset_reset="earliest",
            max_partition_fetch_bytes=4 * 1024 * 1024,
            fetch_max_bytes=32 * 1024 * 1024,
        )
        await consumer.start()
        try:
            partitions = await self._discover()
            if partitions is None:
                return
            consumer.assign(partitions)
            await consumer.seek_to_beginning(*partitions)
            self.partitions = partitions
            log.info("reading %d partitions of %s", len(partitions), sorted(self.roles))
            feed = self.projection.feed
            roles = self.roles
            while not self.stopping.is_set():
                batch = await consumer.getmany(timeout_ms=200, max_records=10000)
                for tp, records in batch.items():
                    role = roles[tp.topic]
                    for record in records:
                        feed(role, record.value, record.timestamp)
        finally:
            self.partitions = []
            await consumer.stop()

    def stop(self) -> None:
        self.stopping.set()

    async def _discover(self) -> list[TopicPartition] | None:
        """Every partition of the topics, waiting (and saying so) while some do not exist."""
        admin = AIOKafkaAdminClient(bootstrap_servers=self.settings.kafka_bootstrap)
        await admin.start()
        try:
            while not self.stopping.is_set():
                found: dict[str, list[int]] = {}
                try:
                    for meta in await admin.describe_topics(sorted(self.roles)):
                        if meta["error_code"] == 0 and meta["partitions"]:
                            found[meta["topic"]] = sorted(
                                p["partition"] for p in meta["partitions"]
                            )
                except KafkaError as error:
                    log.warning("cannot describe the topics (%r); retrying", error)
                missing = sorted(set(self.roles) - set(found))
                if not missing:
                    return [
                        TopicPartition(t, p) for t, parts in sorted(found.items()) for p in parts
                    ]
                log.warning("topics %s do not exist yet (run `croupier topics`); waiting", missing)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.stopping.wait(), timeout=2)
            return None
        finally:
            await admin.close()

    async def lag(self) -> int | None:
        """Committed messages not folded yet; None until the partitions are assigned."""
        consumer, partitions = self.consumer, self.partitions
        if consumer is None or not partitions:
            return None
        try:
            ends = await consumer.end_offsets(partitions)
            positions = [await consumer.position(tp) for tp in partitions]
        except (TimeoutError, KafkaError, AssertionError) as error:
            log.info("cannot measure the lag (%r)", error)
            return None
        lag: int = sum(max(0, ends[tp] - at) for tp, at in zip(partitions, positions, strict=True))
        return lag
