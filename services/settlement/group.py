"""The worker's member of the settlement group: its consumer, and the topics it writes.

The range assignor gives one worker partition p of both `rounds` and `bets` (co-partitioned by
table); with `CROUPIER_INSTANCE_ID` the worker is a static member (`group.instance.id`), so a
replacement with the same id gets its tasks back without a rebalance. Offsets are never committed
by the consumer: they go in the worker's transactions.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any

from confluent_kafka import Consumer, KafkaError, KafkaException, Producer

from services import reading
from services.security.denied import AccessDenied, explain
from services.settings import Settings
from services.settlement.routing import Topics


def consumer(s: Settings, on_error: Callable[[KafkaError], None]) -> Consumer:
    """The worker's consumer of `rounds` and `bets` (read_committed)."""
    return reading.reader(
        s,
        "consumer",
        **{
            "auto.offset.reset": "earliest",
            "partition.assignment.strategy": "range",
            "session.timeout.ms": s.session_timeout_ms,
            "heartbeat.interval.ms": max(100, s.session_timeout_ms // 3),
            "max.partition.fetch.bytes": 4 * 1024 * 1024,
            "fetch.max.bytes": 16 * 1024 * 1024,
            "fetch.wait.max.ms": 100,
            "error_cb": on_error,
            **({"group.instance.id": s.instance_id} if s.instance_id else {}),
        },
    )


def fenced(messages: list[Any]) -> KafkaError | None:
    """The fatal error among what the consumer returned (messages or errors), if any; so is an
    error of code _FATAL, which confluent-kafka does not flag fatal. librdkafka's consumer is then
    dead for good. As a static member it gets one when its session expired while the group
    coordinator did not answer (a paused or cut-off broker): its rejoin is refused as "fenced by
    another consumer with the same group.instance.id" (librdkafka issue 3437), and it returns
    nothing from then on."""
    for message in messages:
        error = message if isinstance(message, KafkaError) else message.error()
        if error is not None and (error.fatal() or error.code() == KafkaError._FATAL):
            return error
    return None


MAGIC = b"CGMDv2:"


def generation(metadata: bytes) -> int:
    """The group generation a consumer's group metadata names (-1: not a member now).

    confluent-kafka hands the metadata as librdkafka serialises it: "CGMDv2:", then the
    generation as a native int32, then the group id, member id and instance id."""
    if not metadata.startswith(MAGIC):
        raise ValueError(f"unknown consumer group metadata format: {metadata[:16]!r}")
    (found,) = struct.unpack_from("=i", metadata, len(MAGIC))
    return int(found)


def topics(client: Consumer | Producer, s: Settings, timeout: float = 30) -> Topics:
    """The outputs' names, and a check that task p can write partition p of its own topics."""
    metadata = client.list_topics(timeout=timeout)
    counts = {}
    for topic in (*s.inputs, *s.outputs, s.topic_state):
        found = metadata.topics.get(topic)
        if found is None or found.error is not None:
            raise KafkaException(found.error if found else KafkaError(3, f"no topic {topic}"))
        counts[topic] = len(found.partitions)
    inputs = counts[s.topic_rounds]
    for topic in (s.topic_accepted, s.topic_state):
        if counts[topic] < inputs:
            raise RuntimeError(
                f"{topic} has {counts[topic]} partitions and {s.topic_rounds} {inputs}: task "
                f"p writes partition p of it; add partitions to {topic} "
                "(kafka-topics --alter --partitions) before starting workers"
            )
    return Topics.of(s, counts[s.topic_rejected], inputs)


def refusal(s: Settings, error: BaseException, transactional_ids: str) -> AccessDenied | None:
    """The refusal of the brokers `error` is (authentication, a missing ACL) for a settlement
    worker whose transactional ids are `transactional_ids`, naming what it was doing; None when
    it is not one."""
    return explain(
        error,
        s,
        doing=f"settle (read {s.topic_rounds} and {s.topic_bets} in group {s.group_id}, "
        f"write the outputs with {transactional_ids})",
        resource=f"the worker's topics, group {s.group_id} or transactional ids "
        f"{s.transactional_prefix}-*",
        operation="the croupier role's operations (services/roles.py)",
    )
