"""Transactions of the worker's own producer left open on a partition by a broker that skipped
their markers, ended the way the coordinator decided before the worker writes again.

Kafka 4.4's transaction coordinator ends a transaction by writing a marker to each of its
partitions; while the partition's leader is not registered (a single broker just restarted, or
fenced after a pause), it takes the partition for deleted and skips its marker. The records
before it stay open, and the next marker of the same producer on that partition would end them
with its own transaction. So after each registration of the transactional id (`init_transactions`:
at start, and for the producer that replaces a failed one), and before any transaction, the
worker asks each partition it writes which of its producer's transactions are open there. None
can be legitimately: the registration has just ended them all. For each one found, the
coordinator's log (`txnlog`) says whether it was committing or aborting it, and the worker writes
that marker itself (KIP-664's WriteTxnMarkers, which `kafka-transactions.sh abort` sends for an
abort). When the log no longer says, the worker writes nothing and stops, saying what to run.
(docs/BROKER-FAULTS.md, "A single broker killed -9 or paused".)
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from kafka import KafkaConsumer, TopicPartition  # type: ignore[import-untyped]
from kafka.admin import KafkaAdminClient  # type: ignore[import-untyped]
from kafka.admin._transactions import AbortTransactionSpec  # type: ignore[import-untyped]
from kafka.errors import (  # type: ignore[import-untyped]
    AuthorizationError,
    KafkaTimeoutError,
)
from kafka.errors import KafkaError as AdminError

from services.security import clients
from services.settings import Settings
from services.settlement import txnlog

log = logging.getLogger("croupier.engine")
OFFSETS = "__consumer_offsets"
READ_SECONDS = 30.0  # to read the coordinator's log; then asked again, as while unreachable
__all__ = ["AuthorizationError", "Undecided", "close", "close_dangling", "errors", "find"]


def errors() -> tuple[type[BaseException], ...]:
    """What `close_dangling` raises while the brokers cannot answer (retried): not a refusal."""
    return (AdminError, OSError)


class Admin(Protocol):
    """The parts of kafka-python's admin client this uses."""

    def describe_transactions(self, transactional_ids: list[str]) -> dict[str, Any]: ...
    def describe_producers(self, partitions: list[TopicPartition]) -> dict[TopicPartition, Any]: ...
    def abort_transaction(self, spec: AbortTransactionSpec) -> None: ...
    def commit_transaction(self, spec: AbortTransactionSpec) -> None: ...
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


class Undecided(RuntimeError):
    """Open transactions whose outcome the coordinator's log no longer shows: the worker stops
    rather than guess between paying twice and not paying."""


def close(
    admin: Admin,
    decisions: Callable[[], list[txnlog.Entry]],
    transactional_id: str,
    topics: Iterable[str],
) -> list[tuple[Dangling, txnlog.Outcome]]:
    """End every open transaction `find` finds as the coordinator decided (`decisions` reads its
    log, only when one is found); what was ended, and how. Raises `Undecided`, having written
    nothing, when a decision is missing."""
    found = find(admin, transactional_id, topics)
    if not found:
        return []
    entries = decisions()
    ended = [
        (d, txnlog.decide(entries, d.producer_id, d.producer_epoch, _named(d.partition)))
        for d in found
    ]
    unknown = [d for d, outcome in ended if outcome is txnlog.Outcome.UNKNOWN]
    if unknown:
        raise Undecided(_undecided(transactional_id, unknown))
    for d, outcome in ended:
        committed = outcome is txnlog.Outcome.COMMIT
        spec = AbortTransactionSpec(
            topic_partition=d.partition,
            producer_id=d.producer_id,
            producer_epoch=d.producer_epoch,
            coordinator_epoch=d.coordinator_epoch,
        )
        (admin.commit_transaction if committed else admin.abort_transaction)(spec)
        log.warning(
            "%s partition %d: a transaction of %s (epoch %d) was left open there from offset %d, "
            "its marker skipped by the brokers; the coordinator's log shows it %s, so its "
            "%s marker is written now",
            d.partition.topic,
            d.partition.partition,
            transactional_id,
            d.producer_epoch,
            d.start,
            "committed" if committed else "aborted",
            outcome.value,
        )
    return ended


def close_dangling(settings: Settings, transactional_id: str, topics: Iterable[str]) -> int:
    """End the producer's open transactions the brokers left behind; how many. Raises the
    admin client's errors (the caller retries while the brokers are unreachable) and
    `Undecided`."""
    options = clients.kafka_python(settings)
    admin = Markers(**options, client_id="croupier-dangling")
    try:
        return len(
            close(admin, lambda: read_log(options, transactional_id), transactional_id, topics)
        )
    finally:
        admin.close()


class Markers(KafkaAdminClient):  # type: ignore[misc]
    """kafka-python's admin client, which writes abort markers only, made to write commit
    markers too: the same WriteTxnMarkers request with the other result."""

    def commit_transaction(self, spec: AbortTransactionSpec) -> None:
        self._manager.run(self._write_commit, spec)

    async def _write_commit(self, spec: AbortTransactionSpec) -> None:
        leaders = await self._async_get_leader_for_partitions([spec.topic_partition])
        request = commit_request(spec)
        response = await self._manager.send(request, node_id=next(iter(leaders)))
        self._abort_transaction_process_response(response, spec)


def commit_request(spec: AbortTransactionSpec) -> Any:
    """The WriteTxnMarkers request that commits `spec`'s open records: kafka-python's abort
    request with the other result."""
    request = KafkaAdminClient._abort_transaction_request(spec)
    for marker in request.markers:
        marker.transaction_result = True
    return request


def read_log(options: dict[str, Any], transactional_id: str) -> list[txnlog.Entry]:
    """Every record of `transactional_id` in the coordinator's log, oldest first."""
    consumer = KafkaConsumer(
        **options, client_id="croupier-dangling", group_id=None, enable_auto_commit=False
    )
    try:
        count = len(consumer.partitions_for_topic(txnlog.TOPIC) or ())
        if not count:
            return []
        tp = TopicPartition(txnlog.TOPIC, txnlog.partition_of(transactional_id, count))
        consumer.assign([tp])
        consumer.seek_to_beginning(tp)
        end = consumer.end_offsets([tp])[tp]
        entries: list[txnlog.Entry] = []
        deadline = time.monotonic() + READ_SECONDS
        while consumer.position(tp) < end:
            if time.monotonic() > deadline:
                raise KafkaTimeoutError(f"{tp.topic}-{tp.partition} not read to {end} in time")
            for records in consumer.poll(timeout_ms=1000).values():
                for record in records:
                    entry = txnlog.decode(record.key, record.value)
                    if entry is not None and entry.transactional_id == transactional_id:
                        entries.append(entry)
        return entries
    finally:
        consumer.close()


def _named(partition: TopicPartition) -> tuple[str, int]:
    return (partition.topic, partition.partition)


def _undecided(transactional_id: str, unknown: list[Dangling]) -> str:
    where = ", ".join(
        f"{d.partition.topic}-{d.partition.partition} (epoch {d.producer_epoch}, from offset "
        f"{d.start})"
        for d in unknown
    )
    return (
        f"transactions of {transactional_id} were left open by the brokers on {where}, and the "
        "coordinator's log (__transaction_state) no longer shows whether they were committed: "
        "the worker writes nothing rather than guess. End each with kafka-transactions.sh abort, "
        "start the worker again and run croupier verify (docs/OPERATIONS.md, Broker loss)"
    )
