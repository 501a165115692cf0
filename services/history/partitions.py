"""The read side's topics on the brokers: the login, the projector's consumer, the partitions, a
projector's share.

The projector and the API's lag both start here: an admin client once a broker accepted the login
(`connected`), then every partition of the projected topics once they all exist (`partitions_of`,
waiting and saying so meanwhile, as `croupier topics` may not have run yet).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import NoReturn, TypeVar

from confluent_kafka import Consumer, KafkaError, KafkaException
from confluent_kafka.admin import AdminClient

from services import reading
from services.history.projection import SOURCES, Source
from services.history.store import Position
from services.security import clients
from services.security.denied import AccessDenied, explain
from services.security.login import Unreachable, login
from services.settings import Settings

log = logging.getLogger("croupier.projector")
T = TypeVar("T")
REFUSED = (KafkaError.TOPIC_AUTHORIZATION_FAILED, KafkaError._AUTHENTICATION)
"""The errors of the consumer that are a refusal of the brokers (a group's refusal is none: see
`reading.unused_group`)."""


PREFETCH_KIB = 8 * 1024
"""What librdkafka may fetch ahead of the projector, per partition (its default, 64 MiB, tripled
the projector's memory: docs/DESIGN.md, "The worker's client, polled off the event loop")."""
FETCH_BYTES = 256 * 1024
"""What one fetch brings of a partition, compressed: the worker's outputs decompress to about ten
times that, past the prefetch bound (4 MiB held the projectors at twice the memory)."""


def reader(settings: Settings, on_error: Callable[[KafkaError], None]) -> Consumer:
    """The projector's consumer (`reading.reader`), the end of each partition told."""
    return reading.reader(
        settings,
        "projector",
        **{
            "auto.offset.reset": "earliest",
            "enable.partition.eof": True,
            "max.partition.fetch.bytes": FETCH_BYTES,
            "fetch.max.bytes": 16 * FETCH_BYTES,
            "queued.max.messages.kbytes": PREFETCH_KIB,
            "error_cb": on_error,
        },
    )


def sources(settings: Settings) -> dict[str, Source]:
    """The topic name of each input of the projector."""
    return dict(zip(settings.projected, SOURCES, strict=True))


async def connected(settings: Settings, stopping: asyncio.Event, name: str) -> AdminClient | None:
    """An admin client, once a broker accepted the login (waiting, and saying so, while none
    listens; a refused login is AccessDenied); None when stopped first."""
    while not stopping.is_set():
        try:
            await login(settings)
            return reading.admin(settings, name)
        except Unreachable as error:
            log.warning("%s; retrying", error)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stopping.wait(), timeout=2)
    return None


def _refused(settings: Settings, topics: list[str]) -> AccessDenied:
    who = clients.principal(settings)
    return AccessDenied(
        f"{who} is not allowed to project the read side: the brokers refused Describe and Read "
        f"on topics {', '.join(sorted(topics))}; run it as the readside role "
        "(.data/kafka/clients/readside.env), or have the operator grant it in services/roles.py "
        "(`croupier acls`, as admin)",
        principal=who,
    )


async def partitions_of(
    settings: Settings, admin: AdminClient, topics: list[str], stopping: asyncio.Event
) -> list[Position] | None:
    """Every partition of the topics, waiting (and saying so) while some do not exist or the
    brokers do not answer; a topic this principal may not describe is AccessDenied."""
    while not stopping.is_set():
        try:
            found = await asyncio.to_thread(_described, settings, admin, sorted(topics))
        except KafkaException as error:
            log.warning("cannot reach Kafka at %s (%s); retrying", settings.kafka_bootstrap, error)
        else:
            missing = sorted(set(topics) - set(found))
            if not missing:
                return [(t, p) for t, parts in sorted(found.items()) for p in parts]
            log.warning("topics %s do not exist yet (run `croupier topics`); waiting", missing)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stopping.wait(), timeout=2)
    return None


def _described(settings: Settings, admin: AdminClient, topics: list[str]) -> dict[str, list[int]]:
    """The partitions of each of the topics that exists (one metadata request each: a topic
    this principal may not describe is left out of a request for all of them, not refused)."""
    found: dict[str, list[int]] = {}
    refused: list[str] = []
    for topic in topics:
        meta = admin.list_topics(topic, timeout=10).topics.get(topic)
        if meta is None:
            continue
        if meta.error is not None and meta.error.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED:
            refused.append(topic)
        elif meta.error is None and meta.partitions:
            found[topic] = sorted(meta.partitions)
    if refused:
        raise _refused(settings, refused)
    return found


def owned(partitions: list[Position], shard: tuple[int, int]) -> list[Position]:
    """The partitions shard `i` of `n` projects: those numbered i modulo n, of every topic (a
    table's journals and board have the same number, so one shard has all of a table)."""
    index, count = shard
    return [(topic, p) for topic, p in partitions if p % count == index]


def refusal(settings: Settings, error: KafkaException) -> AccessDenied | None:
    """What the brokers refused the read side, as AccessDenied; None when `error` is no refusal."""
    return explain(
        error,
        settings,
        doing="project the read side",
        resource=f"topics {', '.join(settings.projected)}",
        operation="Describe and Read",
    )


def failed(settings: Settings, error: KafkaError) -> NoReturn:
    """Stop on an error of the consumer it cannot recover from, saying what to do."""
    denied = refusal(settings, KafkaException(error))
    if denied is not None:
        raise denied
    log.critical(
        "the Kafka consumer failed for good (%s); the projector stops. Every batch was committed "
        "with its positions: fix the cause (the brokers' logs say more), then start it again "
        "(`croupier projector`, or `croupier api`) and it resumes there",
        error,
    )
    raise KafkaException(error)


async def kafka(settings: Settings, stopping: asyncio.Event, call: Callable[[], T]) -> T:
    """Run a request to the brokers off the event loop, again every second while they do not
    answer (what they refuse is AccessDenied)."""
    while True:
        try:
            return await asyncio.to_thread(call)
        except KafkaException as error:
            denied = refusal(settings, error)
            if denied is not None:
                raise denied from None
            if stopping.is_set():
                raise
            log.warning("Kafka did not answer (%s); retrying in 1 s", error)
            await asyncio.sleep(1)
