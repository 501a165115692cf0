"""Read whole topics with kafka-python, committed records only, up to their end offsets."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from kafka import KafkaConsumer, TopicPartition  # type: ignore[import-untyped]
from kafka.errors import KafkaError  # type: ignore[import-untyped]

from schemas.codec import payload
from services.security import clients
from services.security.denied import partitions as readable
from services.settings import Settings


@dataclass(frozen=True, kw_only=True)
class Message:
    """One message as read: where it was, its key, its value and its timestamp (ms)."""

    topic: str
    partition: int
    offset: int
    key: bytes | None
    value: bytes
    timestamp: int = -1


def message(topic: str, partition: int, record: Any) -> Message:
    """A kafka-python ConsumerRecord as a Message (a null value: an empty message)."""
    return Message(
        topic=topic,
        partition=partition,
        offset=record.offset,
        key=record.key,
        value=payload(record.value),
        timestamp=record.timestamp,
    )


def read_topic(
    settings: Settings,
    topic: str,
    *,
    timeout: float = 60.0,
    progress: Callable[[int, int], None] | None = None,
) -> Iterator[Message]:
    """Every committed message of a topic, partition by partition, up to the end at call time."""
    consumer = KafkaConsumer(
        **clients.kafka_python(settings),
        group_id=None,
        enable_auto_commit=False,
        isolation_level="read_committed",
        auto_offset_reset="earliest",
        consumer_timeout_ms=1000,
        max_partition_fetch_bytes=8 * 1024 * 1024,
        fetch_max_bytes=64 * 1024 * 1024,
    )
    try:
        tps = [
            TopicPartition(topic, p) for p in readable(consumer, settings, topic, doing="read it")
        ]
        consumer.assign(tps)
        consumer.seek_to_beginning(*tps)
        ends = consumer.end_offsets(tps)
        total = sum(ends.values())
        done = 0
        deadline = time.monotonic() + timeout
        open_ = {tp for tp in tps if consumer.position(tp) < ends[tp]}
        while open_:
            if time.monotonic() > deadline:
                raise TimeoutError(f"reading {topic!r} took longer than {timeout:.0f} s")
            batch = consumer.poll(timeout_ms=500, max_records=50_000)
            for tp, records in batch.items():
                for r in records:
                    if r.offset < ends[tp]:
                        yield message(topic, tp.partition, r)
                done += len(records)
            if progress is not None:
                progress(done, total)
            for tp in list(open_):
                if consumer.position(tp) >= ends[tp]:
                    open_.discard(tp)
    finally:
        consumer.close()


def log_starts(settings: Settings, topic: str) -> dict[int, tuple[int, int]]:
    """Each partition's (log start offset, end offset): where its kept records begin and end.

    The start moves only forward (retention, `delete_records`), so asked after a read it bounds
    from below where that read began: a record read below it may have had neighbours removed.
    """
    consumer = KafkaConsumer(**clients.kafka_python(settings), group_id=None)
    try:
        tps = [
            TopicPartition(topic, p) for p in readable(consumer, settings, topic, doing="read it")
        ]
        starts = consumer.beginning_offsets(tps)
        ends = consumer.end_offsets(tps)
    finally:
        consumer.close()
    return {tp.partition: (starts[tp], ends[tp]) for tp in tps}


def committed_lag(settings: Settings, group: str, topics: list[str], wait: float = 30.0) -> int:
    """How many input messages the group has not committed yet (0 when it has caught up).

    A young broker elects the group coordinator on first use: errors Kafka calls retriable
    (coordinator not available or loading) are retried for up to `wait` seconds.
    """
    deadline = time.monotonic() + wait
    while True:
        try:
            return _committed_lag(settings, group, topics)
        except KafkaError as error:
            if not error.retriable or time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def _committed_lag(settings: Settings, group: str, topics: list[str]) -> int:
    from kafka.admin import KafkaAdminClient  # type: ignore[import-untyped]

    admin = KafkaAdminClient(**clients.kafka_python(settings))
    try:
        committed = admin.list_group_offsets({group: None}).get(group, {})
    finally:
        admin.close()
    consumer = KafkaConsumer(**clients.kafka_python(settings), group_id=None)
    try:
        tps = [
            TopicPartition(t, p)
            for t in topics
            for p in sorted(consumer.partitions_for_topic(t) or ())
        ]
        ends = consumer.end_offsets(tps)
    finally:
        consumer.close()
    lag = 0
    for tp in tps:
        meta = committed.get(tp)
        lag += ends[tp] - (meta.offset if meta is not None and meta.offset >= 0 else 0)
    return lag
