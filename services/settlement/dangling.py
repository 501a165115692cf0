"""Transactions of the worker's own producer left open on a partition by a broker that skipped
their markers, aborted before the worker writes again.

Kafka 4.4's transaction coordinator ends a transaction by writing a marker to each of its
partitions; while the partition's leader is not registered (a single broker just restarted, or
fenced after a pause), it takes the partition for deleted and skips its marker. The records
before it stay open, and since a producer keeps its producer id across a failed transaction, the
next commit of the same transactional id would commit them too: a batch decided before the
failure, settled again by its rebuilt task. So after each registration of the transactional id
(`init_transactions`: at start, and for the producer that replaces a failed one), and before any
transaction, the worker asks each partition it writes which of its producer's transactions are
open there. None can be legitimately: the registration has just ended them all. Each one found
is aborted (KIP-664's WriteTxnMarkers, as `kafka-transactions.sh abort` does); the task is then
built from what was committed, so an aborted part is written again by the fold.
(docs/BROKER-FAULTS.md, "A single broker killed -9 or paused".)
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from kafka import TopicPartition  # type: ignore[import-untyped]
from kafka.admin import KafkaAdminClient  # type: ignore[import-untyped]
from kafka.admin._transactions import AbortTransactionSpec  # type: ignore[import-untyped]
from kafka.errors import AuthorizationError  # type: ignore[import-untyped]
from kafka.errors import KafkaError as AdminError

from services.security import clients
from services.settings import Settings

log = logging.getLogger("croupier.engine")
OFFSETS = "__consumer_offsets"
__all__ = ["AuthorizationError", "close_dangling", "errors", "find"]


def errors() -> tuple[type[BaseException], ...]:
    """What `close_dangling` raises while the brokers cannot answer (retried): not a refusal."""
    return (AdminError, OSError)


class Admin(Protocol):
    """The parts of kafka-python's admin client this uses."""

    def describe_transactions(self, transactional_ids: list[str]) -> dict[str, Any]: ...
    def describe_producers(self, partitions: list[TopicPartition]) -> dict[TopicPartition, Any]: ...
    def abort_transaction(self, spec: AbortTransactionSpec) -> None: ...
    def describe_topics(self, topics: list[str]) -> list[dict[str, Any]]: ...


@dataclass(frozen=True)
class Dangling:
    """An open transaction of the worker's producer on one partition."""

    partition: TopicPartition
    producer_id: int
    producer_epoch: int
    coordinator_epoch: int
    start: int


def find(admin: Admin, transactional_id: str, topics: Iterable[str]) -> list[Dangling]:
    """The open transactions of `transactional_id`'s producer on every partition of `topics`
    (and of the consumer offsets topic), older than its current epoch."""
    described = admin.describe_transactions([transactional_id])[transactional_id]
    producer, epoch = described.producer_id, described.producer_epoch
    partitions = [
        TopicPartition(topic["name"], p["partition_index"])
        for topic in admin.describe_topics([*topics, OFFSETS])
        for p in topic["partitions"]
    ]
    return [
        Dangling(
            partition=tp,
            producer_id=producer,
            producer_epoch=active.producer_epoch,
            coordinator_epoch=active.coordinator_epoch,
            start=active.current_transaction_start_offset,
        )
        for tp, state in sorted(admin.describe_producers(partitions).items())
        for active in state.active_producers
        if active.producer_id == producer
        and active.current_transaction_start_offset >= 0
        and active.producer_epoch < epoch
    ]


def abort(admin: Admin, transactional_id: str, topics: Iterable[str]) -> list[Dangling]:
    """Abort every open transaction `find` finds; what was aborted."""
    found = find(admin, transactional_id, topics)
    for dangling in found:
        log.warning(
            "%s partition %d: a transaction of %s (epoch %d) was left open there from offset %d, "
            "its marker skipped by the brokers; aborted",
            dangling.partition.topic,
            dangling.partition.partition,
            transactional_id,
            dangling.producer_epoch,
            dangling.start,
        )
        admin.abort_transaction(
            AbortTransactionSpec(
                topic_partition=dangling.partition,
                producer_id=dangling.producer_id,
                producer_epoch=dangling.producer_epoch,
                coordinator_epoch=dangling.coordinator_epoch,
            )
        )
    return found


def close_dangling(settings: Settings, transactional_id: str, topics: Iterable[str]) -> int:
    """Abort the producer's open transactions the brokers left behind; how many. Raises the
    admin client's errors (the caller retries while the brokers are unreachable)."""
    admin = KafkaAdminClient(**clients.kafka_python(settings), client_id="croupier-dangling")
    try:
        return len(abort(admin, transactional_id, topics))
    finally:
        admin.close()
