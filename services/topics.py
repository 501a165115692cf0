"""`croupier topics`: create the contract's topics, or check the ones that exist (idempotent)."""

from __future__ import annotations

import contextlib
import sys
from dataclasses import dataclass
from typing import TextIO

from kafka.admin import KafkaAdminClient, NewTopic  # type: ignore[import-untyped]
from kafka.errors import TopicAlreadyExistsError  # type: ignore[import-untyped]

from services.settings import Settings

INPUT_MAX_MESSAGE = 1024 * 1024 + 12
"""Bytes an input message may take (the broker default, pinned: `rejected` is sized from it)."""
MAX_MESSAGE = 8 * 1024 * 1024
"""Bytes a `rejected` record may take: an oversized input is kept verbatim, escaped. Escaping
makes it at most 6 times longer (a control byte becomes \\u0001, a byte that is not UTF-8 \\\\xff),
so 8 MiB holds any input of INPUT_MAX_MESSAGE; with 4 MiB such a record could never be written and
stalled its partition for ever (found by the chaos suite)."""


STATE_SEGMENT = 8 * 1024 * 1024
"""Bytes of a segment of the state topic: only closed segments are compacted."""


@dataclass(frozen=True, kw_only=True)
class Plan:
    name: str
    partitions: int
    config: dict[str, str]


def plan(settings: Settings) -> list[Plan]:
    """The topics croupier reads and writes, with their partitions and configuration."""
    retention = {"retention.ms": str(settings.retention_ms)}
    sized = {**retention, "max.message.bytes": str(INPUT_MAX_MESSAGE)}
    inputs = [Plan(name=t, partitions=settings.partitions, config=sized) for t in settings.inputs]
    outputs = [
        Plan(
            name=settings.topic_settlements, partitions=settings.output_partitions, config=retention
        ),
        Plan(name=settings.topic_refunds, partitions=settings.output_partitions, config=retention),
        Plan(
            name=settings.topic_adjustments, partitions=settings.output_partitions, config=retention
        ),
        Plan(
            name=settings.topic_table_stats,
            partitions=settings.output_partitions,
            config={"cleanup.policy": "compact"},
        ),
        Plan(
            name=settings.topic_rejected,
            partitions=settings.output_partitions,
            config={**retention, "max.message.bytes": str(MAX_MESSAGE)},
        ),
        # Written by task p to partition p, so one table's accepted events stay in order.
        Plan(name=settings.topic_accepted, partitions=settings.partitions, config=sized),
        Plan(
            name=settings.topic_state,
            partitions=settings.partitions,
            config={
                "cleanup.policy": "compact",
                "max.message.bytes": str(MAX_MESSAGE),
                # A restore reads what compaction left plus the dirty tail: small segments and a
                # low dirty ratio keep that tail near the size of the state itself.
                "segment.bytes": str(STATE_SEGMENT),
                "segment.ms": str(10 * 60 * 1000),
                "min.cleanable.dirty.ratio": "0.1",
                # A tombstone needs to outlive only a restore's read of the partition (seconds).
                "delete.retention.ms": str(10 * 60 * 1000),
            },
        ),
    ]
    return inputs + outputs


def ensure(settings: Settings, out: TextIO = sys.stdout) -> list[str]:
    """Create what is missing; return the problems found with what exists (empty when all fit)."""
    admin = KafkaAdminClient(
        bootstrap_servers=settings.kafka_bootstrap, client_id="croupier-topics"
    )
    try:
        wanted = plan(settings)
        existing = _partitions(admin, [p.name for p in wanted])
        missing = [p for p in wanted if p.name not in existing]
        if missing:
            with contextlib.suppress(TopicAlreadyExistsError):  # another process was first
                admin.create_topics(
                    [
                        NewTopic(
                            name=p.name,
                            num_partitions=p.partitions,
                            replication_factor=settings.replication_factor,
                            topic_configs=p.config,
                        )
                        for p in missing
                    ]
                )
        for p in missing:
            print(f"created {p.name}: {p.partitions} partitions {p.config}", file=out)
        existing = _partitions(admin, [p.name for p in wanted])
        problems = []
        created = {p.name for p in missing}
        for p in wanted:
            if p.name not in created:
                print(f"exists  {p.name}: {existing.get(p.name)} partitions", file=out)
        rounds, bets = (existing.get(t) for t in settings.inputs)
        if rounds != bets:
            problems.append(
                f"{settings.topic_rounds} has {rounds} partitions and {settings.topic_bets} has "
                f"{bets}: they must be co-partitioned; add partitions to the smaller one "
                "(kafka-topics --alter --partitions N) before starting workers"
            )
        return problems
    finally:
        admin.close()


def _partitions(admin: KafkaAdminClient, names: list[str]) -> dict[str, int]:
    found: dict[str, int] = {}
    for meta in admin.describe_topics(names):
        if meta.get("error_code", 0) == 0 and meta.get("partitions"):
            found[meta["name"]] = len(meta["partitions"])
    return found
