"""Reading with librdkafka: consumers of assigned partitions (read_committed, in no group,
committing nothing), their admin client, and `take`, a batch off any consumer.

The worker's restores (the state topic), the projector and the API's lag (the read side's topics)
read partitions no group gave them: they `assign` them at offsets they keep themselves (in the
state topic's position records, in the database). librdkafka asks for a group id all the same; it
is never used: nothing subscribes, and automatic commits and the offset store are off, so no group
is joined and no offset committed (the readside role has no group ACL, and needs none).

Their configuration is `clients.librdkafka`'s (address and security) and the settings' client id,
as for every other client of the project. librdkafka's calls block: a caller on an event loop runs
them in a thread (the projector, `take`, with a short timeout), as the settlement engine runs
its whole loop in one.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

from confluent_kafka import Consumer, IsolationLevel, KafkaError, TopicPartition
from confluent_kafka.admin import AdminClient, OffsetSpec  # type: ignore[attr-defined]

from services.security import clients
from services.settings import Settings

TIMEOUT = 30.0
"""Seconds a metadata or offsets request may take before it fails (and is tried again)."""


FETCH_QUEUE_BACKOFF_MS: Final = 10
"""How long librdkafka postpones a partition's next fetch once its queue holds what it prefetches
(`queued.min.messages`); its default, 1 s, left a restore waiting on the brokers for most of its
time (docs/DESIGN.md, "Reading at the brokers' pace")."""


def reader(settings: Settings, client_id: str, **extra: Any) -> Consumer:
    """A read_committed consumer whose offsets librdkafka neither commits nor stores (`extra`:
    librdkafka settings on top): of assigned partitions, or the worker's member of its group,
    which commits them in its transactions."""
    return Consumer(
        {
            **clients.librdkafka(settings),
            "client.id": f"{settings.group_id}-{client_id}",
            "group.id": settings.group_id,
            "enable.auto.commit": False,
            "enable.auto.offset.store": False,
            "isolation.level": "read_committed",
            "fetch.queue.backoff.ms": FETCH_QUEUE_BACKOFF_MS,
            **extra,
        }
    )


def admin(settings: Settings, client_id: str, **extra: Any) -> AdminClient:
    """An admin client (topics' metadata, partitions' offsets)."""
    return AdminClient(
        {**clients.librdkafka(settings), "client.id": f"{settings.group_id}-{client_id}", **extra}
    )


def offsets(
    client: AdminClient,
    partitions: Iterable[tuple[str, int]],
    *,
    earliest: bool,
    timeout: float = TIMEOUT,
) -> dict[tuple[str, int], int]:
    """The first offset of each partition, or its last stable offset (read_committed's end), in
    one request per broker; raises KafkaException when the brokers do not answer."""
    spec = OffsetSpec.earliest() if earliest else OffsetSpec.latest()  # type: ignore[no-untyped-call]
    asked = {TopicPartition(t, p): spec for t, p in partitions}
    if not asked:
        return {}
    answers = client.list_offsets(
        asked, isolation_level=IsolationLevel.READ_COMMITTED, request_timeout=timeout
    )
    return {(tp.topic, tp.partition): max(0, f.result().offset) for tp, f in answers.items()}


def bounds_of(consumer: Consumer, tp: TopicPartition) -> tuple[int, int]:
    """The first offset a partition holds and its last stable offset (read_committed's end)."""
    first, end = consumer.get_watermark_offsets(tp, timeout=TIMEOUT, cached=False)
    return max(first, 0), max(end, 0)


def unused_group(error: KafkaError) -> bool:
    """The brokers refused the lookup of the group's coordinator that librdkafka makes, once at
    start, for the group id it requires of every consumer: nothing to a reader of assigned
    partitions, which never uses the group (the readside role, with no group ACL, gets it)."""
    return error.code() == KafkaError.GROUP_AUTHORIZATION_FAILED


def take(consumer: Consumer, most: int, timeout: float) -> list[Any]:
    """What the consumer holds now, up to `most` messages, waiting at most `timeout` for the
    first (librdkafka's `consume` would wait the whole timeout for a batch to fill)."""
    first = consumer.poll(timeout)
    if first is None:
        return []
    return [first, *consumer.consume(num_messages=most - 1, timeout=0)]
