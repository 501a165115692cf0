"""A read-side database that has projected past the ends of the topics: they were recreated
(a wiped broker, another cluster) since it was filled, and it no longer follows them.

The projector refuses to start on such a database (exit code 3), and `croupier run` checks its
own before it starts the API: the SQLite file it owns is moved aside, a database the user named
is left alone.
"""

from __future__ import annotations

from collections.abc import Mapping

from kafka import KafkaConsumer  # type: ignore[import-untyped]
from kafka.structs import TopicPartition  # type: ignore[import-untyped]

from services.history.store import Position, Store
from services.security import clients
from services.settings import Settings

EXIT_CODE = 3
"""The exit code of a projector (or API) that found its database ahead of the topics."""


class Recreated(RuntimeError):
    """The database holds positions past the ends of the topics it projects."""

    def __init__(self, position: Position, stored: int, end: int) -> None:
        topic, partition = position
        super().__init__(
            f"the read side's database has projected {topic}[{partition}] up to offset {stored}, "
            f"past its end ({end}): the topics were recreated since. Give it a new database "
            "(another DATABASE_URL, or delete .data/readside.sqlite), or point it at the old topics"
        )


def ahead(stored: Mapping[Position, int], ends: Mapping[Position, int]) -> Recreated | None:
    """The first partition the database has projected past its end, if any (partitions it
    never projected, or that no longer exist, do not count)."""
    for position in sorted(ends):
        at = stored.get(position)
        if at is not None and at > ends[position]:
            return Recreated(position, at, ends[position])
    return None


def check(settings: Settings, store: Store, timeout_ms: int = 10_000) -> Recreated | None:
    """Whether the database behind `store` has projected past the ends of the topics it
    projects, as the brokers have them now."""
    stored = store.positions()
    topics = sorted({topic for topic, _ in stored})
    if not topics:
        return None
    consumer = KafkaConsumer(
        **clients.kafka_python(settings),
        group_id=None,
        enable_auto_commit=False,
        isolation_level="read_committed",
        request_timeout_ms=max(timeout_ms, 5_000),
    )
    try:
        tps = [
            TopicPartition(topic, p)
            for topic in topics
            for p in sorted(consumer.partitions_for_topic(topic) or ())
        ]
        ends = consumer.end_offsets(tps) if tps else {}
    finally:
        consumer.close()
    return ahead(stored, {(tp.topic, tp.partition): end for tp, end in ends.items()})
