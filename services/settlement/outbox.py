"""Records of one transaction, grouped into producer batches per topic partition."""

from __future__ import annotations

import asyncio
from typing import Any

from aiokafka import AIOKafkaProducer  # type: ignore[import-untyped]
from aiokafka.partitioner import murmur2  # type: ignore[import-untyped]

LARGE = 256 * 1024
"""Values above this go alone (an oversized bad input kept verbatim in `rejected`)."""


class Partitioner:
    """Kafka's default keyed partitioning (murmur2, as the Java client), with a cache per key."""

    def __init__(self) -> None:
        self._cache: dict[tuple[bytes, int], int] = {}

    def __call__(self, key: bytes | None, partitions: int, fallback: int) -> int:
        if key is None:
            return fallback % partitions
        found = self._cache.get((key, partitions))
        if found is None:
            if len(self._cache) > 200_000:
                self._cache.clear()
            found = self._cache[(key, partitions)] = (murmur2(key) & 0x7FFFFFFF) % partitions
        return found


Message = tuple[str, int, bytes | None, bytes | None]
"""topic, partition, key and value (None: a tombstone) of a record to write."""


async def send_all(
    producer: AIOKafkaProducer, messages: list[Message]
) -> dict[tuple[str, int], int]:
    """Send messages in as few producer batches as fit, and wait for them; returns, for each topic
    partition written, the offset after the last record sent to it."""
    batches: dict[tuple[str, int], Any] = {}
    futures: list[asyncio.Future[Any]] = []
    counts: list[int] = []
    for topic, partition, key, value in messages:
        if value is not None and len(value) > LARGE:
            futures.append(await producer.send(topic, value, key=key, partition=partition))
            counts.append(1)
            continue
        slot = (topic, partition)
        batch = batches.get(slot)
        if batch is None:
            batch = batches[slot] = producer.create_batch()
        if batch.append(key=key, value=value, timestamp=None) is None:
            counts.append(batch.record_count())
            futures.append(await producer.send_batch(batch, topic, partition=partition))
            batch = batches[slot] = producer.create_batch()
            if batch.append(key=key, value=value, timestamp=None) is None:
                size = len(value or b"") + len(key or b"")
                raise ValueError(f"a record of {size} bytes does not fit a batch of {topic}")
    for (topic, partition), batch in batches.items():
        if batch.record_count():
            counts.append(batch.record_count())
            futures.append(await producer.send_batch(batch, topic, partition=partition))
    ends: dict[tuple[str, int], int] = {}
    for sent, count in zip(await asyncio.gather(*futures), counts, strict=True):
        slot = (sent.topic, sent.partition)
        ends[slot] = max(ends.get(slot, 0), sent.offset + count)
    return ends
