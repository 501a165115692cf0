"""What an operator or a failing disk can do to the topics: delete the start of the inputs,
corrupt a state record."""

from __future__ import annotations

import time

from kafka import KafkaConsumer, KafkaProducer, TopicPartition  # type: ignore[import-untyped]
from kafka.admin import KafkaAdminClient  # type: ignore[import-untyped]

from services.settings import Settings

GARBAGE = b"\x00\xffnot a state record"


def ends(settings: Settings, partitions: list[int]) -> dict[TopicPartition, int]:
    """The end offsets of both inputs' partitions `partitions` now."""
    consumer = KafkaConsumer(bootstrap_servers=settings.kafka_bootstrap, group_id=None)
    try:
        tps = [TopicPartition(t, p) for t in settings.inputs for p in partitions]
        found: dict[TopicPartition, int] = consumer.end_offsets(tps)
        return found
    finally:
        consumer.close()


def beginnings(settings: Settings, partitions: list[int]) -> dict[TopicPartition, int]:
    """Where both inputs' partitions `partitions` start now (0 until records are deleted)."""
    consumer = KafkaConsumer(bootstrap_servers=settings.kafka_bootstrap, group_id=None)
    try:
        tps = [TopicPartition(t, p) for t in settings.inputs for p in partitions]
        found: dict[TopicPartition, int] = consumer.beginning_offsets(tps)
        return found
    finally:
        consumer.close()


def truncate(settings: Settings) -> dict[TopicPartition, int]:
    """Delete every record of `rounds` and `bets` written so far (AdminClient delete_records), as
    retention does; returns the new start of each partition."""
    upto = ends(settings, list(range(settings.partitions)))
    admin = KafkaAdminClient(bootstrap_servers=settings.kafka_bootstrap)
    try:
        admin.delete_records({tp: offset for tp, offset in upto.items() if offset > 0})
    finally:
        admin.close()
    now = beginnings(settings, list(range(settings.partitions)))
    assert now == upto, f"delete_records left the inputs starting at {now}, not {upto}"
    return upto


def corrupt(settings: Settings, partition: int, key: bytes) -> None:
    """Write garbage under a state key of task `partition` (not in a transaction: readable with
    read_committed, as a record damaged on disk would be)."""
    producer = KafkaProducer(bootstrap_servers=settings.kafka_bootstrap, acks="all")
    try:
        producer.send(settings.topic_state, key=key, value=GARBAGE, partition=partition).get(30)
    finally:
        producer.close()


def state_writes(settings: Settings, partition: int) -> tuple[int, int]:
    """Records of task `partition`'s state: (written, aborted ones included; committed)."""
    counts = []
    for isolation in ("read_uncommitted", "read_committed"):
        consumer = KafkaConsumer(
            bootstrap_servers=settings.kafka_bootstrap,
            group_id=None,
            isolation_level=isolation,
            auto_offset_reset="earliest",
            consumer_timeout_ms=3000,
            max_partition_fetch_bytes=16 * 1024 * 1024,
        )
        try:
            consumer.assign([TopicPartition(settings.topic_state, partition)])
            counts.append(sum(1 for _ in consumer))
        finally:
            consumer.close()
    return counts[0], counts[1]


class OpenTransaction:
    """Whether a transaction has written to a partition and not finished yet: its high watermark
    (uncommitted records included) past its last stable offset (what read_committed may read)."""

    def __init__(self, settings: Settings, topic: str, partition: int) -> None:
        self.tp = TopicPartition(topic, partition)
        self.sides = [
            KafkaConsumer(
                bootstrap_servers=settings.kafka_bootstrap, group_id=None, isolation_level=level
            )
            for level in ("read_uncommitted", "read_committed")
        ]

    def written(self) -> int:
        """Records of the open transaction written so far (0 when none is open)."""
        high, stable = (side.end_offsets([self.tp])[self.tp] for side in self.sides)
        return int(high - stable)

    def wait(self, least: int, timeout: float = 60.0) -> float:
        """Until an open transaction has written at least `least` records; the seconds waited."""
        started = time.monotonic()
        while self.written() < least:
            if time.monotonic() - started > timeout:
                raise TimeoutError(f"no open transaction wrote {least} records to {self.tp}")
            time.sleep(0.001)
        return time.monotonic() - started

    def close(self) -> None:
        for side in self.sides:
            side.close()
