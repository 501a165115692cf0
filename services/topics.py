"""`croupier topics`: create the topics, and bring the configuration of existing ones to plan.

`plan()` is the one source of truth for every topic's partitions and configuration; `reconcile`
(pure) says what differs, `ensure` (the shell) creates, alters and reports. Idempotent: a second
run changes nothing and says so.

The cluster is read with aiokafka (faust's client, already loaded by a worker, which runs this at
every start), whose requests go to a broker of the caller's choosing (`Cluster.configs` asks each);
kafka-python's admin client, which knows how to alter a topic's configuration incrementally, is
loaded only when something has to be created or changed.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any, TextIO, TypeVar

from aiokafka.client import AIOKafkaClient  # type: ignore[import-untyped]
from aiokafka.errors import (  # type: ignore[import-untyped]
    KafkaError,
    UnknownTopicOrPartitionError,
    for_code,
)
from aiokafka.protocol.admin import DescribeConfigsRequest  # type: ignore[import-untyped]
from aiokafka.protocol.metadata import MetadataRequest  # type: ignore[import-untyped]

from services.blocking import finish
from services.security import clients
from services.security.denied import TOPIC_AUTHORIZATION_FAILED, AccessDenied, explain
from services.security.login import login
from services.settings import Settings

T = TypeVar("T")
TOPIC_RESOURCE = 2
"""Kafka's config resource type of a topic."""

INPUT_MAX_MESSAGE = 1024 * 1024 + 12
"""Bytes an input message may take (the broker default, pinned: `rejected` is sized from it)."""
MAX_MESSAGE = 8 * 1024 * 1024
"""Bytes a `rejected` record may take: an oversized input is kept verbatim, escaped. Escaping
makes it at most 6 times longer (a control byte becomes \\u0001, a byte that is not UTF-8 \\\\xff),
so 8 MiB holds any input of INPUT_MAX_MESSAGE; with 4 MiB such a record could never be written and
stalled its partition for ever (found by the chaos suite)."""
SETTLE = 10.0
"""Seconds to wait for altered configuration to be reported by the brokers."""


STATE_SEGMENT = 8 * 1024 * 1024
"""Bytes of a segment of the state topic: only closed segments are compacted."""


@dataclass(frozen=True, kw_only=True)
class Plan:
    name: str
    partitions: int
    config: dict[str, str]


def plan(settings: Settings) -> list[Plan]:
    """The topics croupier reads and writes, with their partitions and configuration.

    Replicated topics (replication_factor > 1) carry min.insync.replicas too: the broker's own
    default is 1, with which an acknowledged write may sit on one broker only and be lost with it.
    """
    return [
        Plan(name=p.name, partitions=p.partitions, config={**p.config, **_durability(settings)})
        for p in _topics(settings)
    ]


def _durability(settings: Settings) -> dict[str, str]:
    if settings.replication_factor == 1:
        return {}
    return {"min.insync.replicas": str(settings.min_insync_replicas)}


def _topics(settings: Settings) -> list[Plan]:
    retention = {"cleanup.policy": "delete", "retention.ms": str(settings.retention_ms)}
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
        # Written by task p to partition p, so one table's journal stays in order; a journal
        # record holds an input of up to INPUT_MAX_MESSAGE with others (schemas/journal.py).
        Plan(
            name=settings.topic_accepted,
            partitions=settings.partitions,
            config={**retention, "max.message.bytes": str(MAX_MESSAGE)},
        ),
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


@dataclass(frozen=True, kw_only=True)
class Existing:
    """A topic as the cluster has it: its partitions and the current value of each planned key."""

    partitions: int
    config: dict[str, str]
    replicas: int | None = None
    """The fewest replicas any of its partitions has (None: not known)."""


@dataclass(frozen=True, kw_only=True)
class Change:
    """One configuration key of one topic to set: from what the cluster has to what is planned."""

    topic: str
    key: str
    old: str | None
    new: str


@dataclass(frozen=True, kw_only=True)
class Verdict:
    """What reconciling the plan with the cluster needs: changes it can make, what it cannot."""

    changes: list[Change]
    right: list[str]
    cannot: list[str]
    problems: list[str]


def reconcile(settings: Settings, wanted: list[Plan], existing: Mapping[str, Existing]) -> Verdict:
    """Compare the plan with the topics that exist (pure).

    Every planned key that differs is a change (cleanup.policy included: a compacted topic that
    was created with delete, or the reverse, is altered). Partitions cannot be removed, and adding
    them is left to the operator: fewer than planned is reported with the command to add them.
    Only what makes running unsafe is a problem (a worker refuses to start on one): `rounds` and
    `bets` not co-partitioned, or a topic written per task (accepted, state) with fewer partitions
    than the inputs have.
    """
    changes: list[Change] = []
    right: list[str] = []
    cannot: list[str] = []
    problems: list[str] = []
    for p in wanted:
        have = existing.get(p.name)
        if have is None:
            continue
        differs = [
            Change(topic=p.name, key=key, old=have.config.get(key), new=value)
            for key, value in sorted(p.config.items())
            if have.config.get(key) != value
        ]
        changes.extend(differs)
        few = have.replicas is not None and have.replicas < settings.replication_factor
        if few:
            cannot.append(
                f"{p.name}: {have.replicas} replicas, {settings.replication_factor} planned; a "
                "topic's replicas are not changed by configuration: add them with "
                "kafka-reassign-partitions.sh (a plan listing "
                f"{settings.replication_factor} brokers for every partition)"
            )
        if have.partitions < p.partitions:
            cannot.append(_too_few(settings, p, have.partitions))
        elif not differs and not few:
            right.append(p.name)
    rounds, bets = (existing.get(t) for t in settings.inputs)
    if rounds is not None and bets is not None:
        if rounds.partitions != bets.partitions:
            problems.append(
                f"{settings.topic_rounds} has {rounds.partitions} partitions and "
                f"{settings.topic_bets} has {bets.partitions}: they must be co-partitioned; add "
                "partitions to the smaller one (kafka-topics.sh --alter --partitions N) before "
                "starting workers"
            )
        tasks = max(rounds.partitions, bets.partitions)
        for name in (settings.topic_accepted, settings.topic_state):
            per_task = existing.get(name)
            if per_task is not None and per_task.partitions < tasks:
                problems.append(
                    f"{name} has {per_task.partitions} partitions and the inputs {tasks}: task p "
                    f"writes partition p, so add partitions ({_alter(settings, name, tasks)}) "
                    "before starting workers"
                )
    return Verdict(changes=changes, right=right, cannot=cannot, problems=problems)


def _too_few(settings: Settings, p: Plan, have: int) -> str:
    line = f"{p.name}: {have} partitions, {p.partitions} planned; add them with `"
    line += _alter(settings, p.name, p.partitions) + "`"
    if p.name in settings.inputs:
        line += (
            " on both inputs at once, with the workers stopped: a table then moves to another "
            "partition, so do it only when every round is decided"
        )
    return line


def _alter(settings: Settings, topic: str, partitions: int) -> str:
    return (
        f"kafka-topics.sh --bootstrap-server {settings.kafka_bootstrap} --alter --topic {topic} "
        f"--partitions {partitions}"
    )


def ensure(settings: Settings, out: TextIO = sys.stdout) -> list[str]:
    """Create what is missing, set every planned key that differs, and report what was done.

    Returns the problems that make running unsafe (empty when all fit); what it cannot fix but
    is safe to run with (too few output partitions) is printed, not returned.
    """
    return finish(ensure_async(settings, out), name="croupier-topics")


async def ensure_async(
    settings: Settings, out: TextIO = sys.stdout, *, logged_in: bool = False
) -> list[str]:
    """`ensure` in a running event loop (a worker's start); `logged_in`: the caller checked the
    login already (`services.security.login`), so it is not checked again."""
    if not logged_in:
        await login(settings)
    cluster = Cluster(settings)
    try:
        await cluster.start()
        return await _ensure(cluster, settings, out)
    except AccessDenied:
        raise
    except Exception as error:
        denied = explain(
            error,
            settings,
            doing="create or check the topics",
            resource="the planned topics",
            operation="Describe and DescribeConfigs (Create too, for a missing topic)",
        )
        if denied is None:
            raise
        raise denied from error
    finally:
        await cluster.close()


def broker_errors() -> tuple[type[BaseException], ...]:
    """What `ensure` raises when the brokers cannot be reached or answer with an error (not a
    refusal of this principal): aiokafka's errors, OSError, and kafka-python's once it is loaded
    (only creating or altering topics loads it)."""
    found: tuple[type[BaseException], ...] = (KafkaError, OSError)
    loaded = sys.modules.get("kafka.errors")
    if loaded is not None:
        found += (loaded.KafkaError,)
    return found


class Cluster:
    """What `ensure` reads of the cluster (aiokafka): topics' partitions and configuration."""

    def __init__(self, settings: Settings) -> None:
        self._client = AIOKafkaClient(**clients.aiokafka(settings), client_id="croupier-topics")

    async def start(self) -> None:
        await self._client.bootstrap()

    async def close(self) -> None:
        await self._client.close()

    async def topics(self, names: list[str]) -> list[dict[str, Any]]:
        """The metadata of these topics (a missing one has an error code, and is not created)."""
        request = MetadataRequest(names, allow_auto_topic_creation=False)
        response = await self._client.send(self._client.get_random_node(), request)
        found: list[dict[str, Any]] = response.to_object()["topics"]
        return found

    async def configs(self, names: list[str], keys: Collection[str]) -> dict[str, dict[str, str]]:
        """The current value of each of these configuration keys of each of these topics, as
        every broker reports it. Each broker applies an altered configuration when it reads the
        metadata log, so for a moment after an alteration they may differ: this waits (up to
        SETTLE seconds) until the brokers that answer agree on these keys, so that a run never
        reports "nothing changed" because it asked the one broker that had not caught up yet.
        (Only these keys: a key left at a broker's own default may differ between brokers.) A
        broker that does not know a topic yet, just after it was created, is asked again too."""
        deadline = time.monotonic() + SETTLE
        while True:
            try:
                answers = await self._every_broker(names, keys)
            except UnknownTopicOrPartitionError:  # a broker yet to read a topic's creation
                if time.monotonic() > deadline:
                    raise
                await asyncio.sleep(0.1)
                continue
            if all(answer == answers[0] for answer in answers) or time.monotonic() > deadline:
                return answers[0]
            await asyncio.sleep(0.1)

    async def _every_broker(
        self, names: list[str], keys: Collection[str]
    ) -> list[dict[str, dict[str, str]]]:
        request = DescribeConfigsRequest([(TOPIC_RESOURCE, name, None) for name in names])
        nodes = sorted(broker.nodeId for broker in self._client.cluster.brokers())
        answers: list[dict[str, dict[str, str]]] = []
        failure: BaseException | None = None
        for node in nodes or [self._client.get_random_node()]:
            try:
                response = await self._client.send(node, request)
            except KafkaError as error:  # a broker going away: the others answer for it
                failure = error
                continue
            answers.append(_configs(response.to_object(), keys))
        if not answers:
            assert failure is not None
            raise failure
        return answers


def _configs(response: dict[str, Any], keys: Collection[str]) -> dict[str, dict[str, str]]:
    found: dict[str, dict[str, str]] = {}
    for resource in response["resources"]:
        if resource["error_code"]:
            error = for_code(resource["error_code"])
            raise error(f"{resource['resource_name']}: {resource['error_message']}")
        found[resource["resource_name"]] = {
            entry["config_names"]: entry["config_value"]
            for entry in resource["config_entries"]
            if entry["config_names"] in keys
        }
    return found


async def _ensure(cluster: Cluster, settings: Settings, out: TextIO) -> list[str]:
    wanted = plan(settings)
    names = [p.name for p in wanted]
    topics = await cluster.topics(names)
    hidden = _unauthorized(topics)
    if hidden:
        who = clients.principal(settings)
        raise AccessDenied(
            f"{who} may not describe topics {', '.join(hidden)} (Describe): run `croupier topics` "
            "with the admin's settings (.data/kafka/clients/admin.env), and `croupier acls` to "
            "grant the roles theirs",
            principal=who,
        )
    missing = [p for p in wanted if p.name not in _layout(topics)[0]]
    made = await asyncio.to_thread(_create, settings, missing) if missing else set()
    for p in missing:
        if p.name in made:
            print(f"created {p.name}: {p.partitions} partitions {p.config}", file=out)
    # Every planned topic exists now; one just made (by us or by hand) may not be in a broker's
    # metadata for a moment yet, and must be reconciled, not skipped: read it again then.
    existing = await _existing(cluster, wanted, None if missing else topics)
    verdict = reconcile(settings, wanted, existing)  # a topic created meanwhile too
    refused = await asyncio.to_thread(_apply, settings, verdict.changes) if verdict.changes else {}
    done = [c for c in verdict.changes if c.topic not in refused]
    await _settle(cluster, settings, wanted, done)
    for change in done:
        print(f"changed {change.topic}: {change.key} {change.old} -> {change.new}", file=out)
    for topic, why in sorted(refused.items()):
        keys = ", ".join(f"{c.key} {c.old} -> {c.new}" for c in verdict.changes if c.topic == topic)
        print(
            f"cannot fix {topic}: the broker refused to set {keys} ({why}); run `croupier "
            "topics` as a client allowed to alter topic configs (ALTER_CONFIGS)",
            file=out,
        )
    for name in verdict.right:
        if name in made:
            continue
        print(f"ok      {name}: {existing[name].partitions} partitions, as planned", file=out)
    for line in verdict.cannot:
        print(f"cannot fix {line}", file=out)
    for problem in verdict.problems:
        print(f"problem {problem}", file=out)
    if not made and not done:
        fits = not (refused or verdict.cannot or verdict.problems)
        print(
            "nothing changed: every topic exists with its planned configuration"
            if fits
            else "nothing changed; what is left to fix is said above",
            file=out,
        )
    return verdict.problems


def _admin(settings: Settings) -> Any:
    """kafka-python's admin client (loaded here only: a start that changes nothing needs none)."""
    from kafka.admin import KafkaAdminClient  # type: ignore[import-untyped]

    return KafkaAdminClient(**clients.kafka_python(settings), client_id="croupier-topics")


def _create(settings: Settings, missing: list[Plan]) -> set[str]:
    """Create the missing topics; the names of those this call created (one another process or
    an operator made meanwhile is not)."""
    from kafka.admin import NewTopic
    from kafka.errors import KafkaError as ClientError  # type: ignore[import-untyped]
    from kafka.errors import NoError, TopicAlreadyExistsError
    from kafka.errors import for_code as for_client_code

    admin = _admin(settings)
    try:
        result = admin.create_topics(
            [
                NewTopic(
                    name=p.name,
                    num_partitions=p.partitions,
                    replication_factor=settings.replication_factor,
                    topic_configs=p.config,
                )
                for p in missing
            ],
            raise_errors=False,
        )
        made: set[str] = set()
        for topic in result["topics"]:
            error = for_client_code(topic["error_code"])
            if error is NoError:
                made.add(topic["name"])
            elif error is not TopicAlreadyExistsError:  # another process, or a hand, was first
                raise error(f"{topic['name']}: {topic.get('error_message')}")
        return made
    except ClientError as error:
        denied = explain(
            error,
            settings,
            doing=f"create the missing topics {', '.join(p.name for p in missing)}",
            resource="those topics",
            operation="Create",
        )
        if denied is None:
            raise
        raise AccessDenied(
            f"{denied}; topics are the operator's: run `croupier topics` with the admin's "
            "settings (.data/kafka/clients/admin.env) before starting this",
            principal=denied.principal,
        ) from error
    finally:
        admin.close()


def _unauthorized(topics: list[dict[str, Any]]) -> list[str]:
    """The topics the brokers would not describe to this principal."""
    return sorted(
        meta["topic"] for meta in topics if meta.get("error_code", 0) == TOPIC_AUTHORIZATION_FAILED
    )


async def _existing(
    cluster: Cluster, wanted: list[Plan], topics: list[dict[str, Any]] | None = None
) -> dict[str, Existing]:
    """Partitions and the current value of every planned key of each planned topic that exists.
    The topics' metadata is `topics` when already read, else read now, waiting (up to SETTLE
    seconds) until the brokers' metadata shows every planned topic."""
    deadline = time.monotonic() + SETTLE
    while topics is None:
        topics = await cluster.topics([p.name for p in wanted])
        if len(_layout(topics)[0]) < len(wanted) and time.monotonic() < deadline:
            topics = None
            await asyncio.sleep(0.1)
    counts, replicas = _layout(topics)
    present = [p for p in wanted if p.name in counts]
    if not present:
        return {}
    keys = {key for p in present for key in p.config}
    described = await cluster.configs([p.name for p in present], keys)
    found: dict[str, Existing] = {}
    for p in present:
        config = described.get(p.name, {})
        values = {key: config[key] for key in p.config if key in config}
        found[p.name] = Existing(
            partitions=counts[p.name], config=values, replicas=replicas[p.name]
        )
    return found


def _apply(settings: Settings, changes: list[Change]) -> dict[str, str]:
    """Set the changed keys, topic by topic (the other keys of a topic stay as they are);
    return why the broker refused, per topic (a client without ALTER_CONFIGS rights, say)."""
    from kafka.admin import ConfigResource, ConfigResourceType
    from kafka.errors import KafkaError as ClientError

    by_topic: dict[str, dict[str, str]] = {}
    for change in changes:
        by_topic.setdefault(change.topic, {})[change.key] = change.new
    if not by_topic:
        return {}
    try:
        admin = _admin(settings)
        try:
            results = admin.alter_configs(
                [
                    ConfigResource(ConfigResourceType.TOPIC, topic, configs=configs)
                    for topic, configs in by_topic.items()
                ]
            ).get("topic", {})
        finally:
            admin.close()
    except (ClientError, ValueError) as error:
        return dict.fromkeys(by_topic, repr(error))
    return {topic: str(result) for topic, result in results.items() if result != "OK"}


async def _settle(
    cluster: Cluster, settings: Settings, wanted: list[Plan], changes: list[Change]
) -> None:
    """Wait until the brokers report what was altered (KRaft applies it a moment later), so that
    what this run printed is what the next run sees; give up after SETTLE seconds."""
    deadline = time.monotonic() + SETTLE
    keys = {(c.topic, c.key) for c in changes}
    while keys and time.monotonic() < deadline:
        pending = reconcile(settings, wanted, await _existing(cluster, wanted)).changes
        if not any((c.topic, c.key) in keys for c in pending):
            return
        await asyncio.sleep(0.1)


def _layout(topics: list[dict[str, Any]]) -> tuple[dict[str, int], dict[str, int]]:
    """Partitions of each topic that exists, and the fewest replicas of any of its partitions."""
    counts: dict[str, int] = {}
    replicas: dict[str, int] = {}
    for meta in topics:
        if meta.get("error_code", 0) == 0 and meta.get("partitions"):
            counts[meta["topic"]] = len(meta["partitions"])
            replicas[meta["topic"]] = min(len(p["replicas"]) for p in meta["partitions"])
    return counts, replicas
