"""What every broker fault does: settings for the cluster, probe rounds, kills mid-settlement."""

from __future__ import annotations

import itertools
import os
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

import msgspec
from kafka.errors import KafkaTimeoutError  # type: ignore[import-untyped]

from services.partitioner import partition_of
from services.settings import Settings
from services.simulation.streams import CLEAN, Profile, generate, interleave
from tests.chaos.audit import Figures, check
from tests.chaos.cluster import (
    Cluster,
    Feeder,
    Watermarks,
    say,
    seeded,
    wait_committed,
)
from tests.chaos.streams import BIG, Tagged, big_round, tables
from tests.chaos_cluster.nodes import Nodes
from tests.kafka import create_topics, isolated_settings

FULL = os.environ.get("CHAOS_CLUSTER_FULL", "1") != "0"
"""The whole suite (make chaos-cluster), or its reduced form (CHAOS_CLUSTER_FULL=0, .ci/run)."""
WORKERS = 3
SETTLED = 300.0
"""Seconds a settlement may take to finish after a fault before the test fails: generous, since
the machine is shared, but a stuck partition still fails (wait_committed)."""


def cluster_settings(nodes: Nodes) -> Settings:
    """Topics of their own, three replicas, two in sync, as an operator's cluster has them."""
    settings = isolated_settings(
        nodes.bootstrap,
        partitions=4,
        session_timeout_ms=10000,
        replication_factor=3,
        min_insync_replicas=2,
    )
    create_topics(settings)
    return settings


def background(seed: int, letter: str, count: int = 12, rounds: int = 15) -> Tagged:
    """Generated tables (every contract case) named <letter>000...: each phase its own tables."""
    name = f'"{letter}0'.encode()
    return [(kind, raw.replace(b'"T0', name)) for kind, raw in tables(seed, count, rounds)]


def small_round(seed: int, table_id: str, bets: int = 5) -> Tagged:
    """One clean round of a few bets on its own table, in the contract's order."""
    profile = Profile(**{**CLEAN.__dict__, "bets_per_round": (bets, bets)})
    streams = generate(seed, tables=1, rounds=1, profile=profile)
    name = table_id.encode()
    merged = interleave(streams, seeded(table_id))
    return [(kind, raw.replace(b"T000", name)) for kind, raw in merged]


_probes = itertools.count()


def table_on(partition: int, partitions: int, prefix: str) -> str:
    """A fresh table id whose rounds and bets land on `partition`."""
    while True:
        name = f"{prefix}{next(_probes):04d}"
        if partition_of(name.encode(), partitions) == partition:
            return name


def probe(feeder: Feeder, partition: int, seed: int, timeout: float = SETTLED) -> float:
    """Seconds from publishing a small round on `partition` to its settlements committed."""
    settings = feeder.settings
    started = time.monotonic()
    feeder.publish(small_round(seed, table_on(partition, settings.partitions, "PRB")))
    wait_committed(settings, partition, timeout=timeout)
    return time.monotonic() - started


def busiest_output(settings: Settings, bets: Tagged) -> tuple[int, int]:
    """The settlements partition that gets most of these bets' settlements (keyed by player),
    and how many it gets."""
    players = Counter(
        partition_of(msgspec.json.decode(raw)["player_id"].encode(), settings.output_partitions)
        for kind, raw in bets
        if kind == "bets"
    )
    partition, count = players.most_common(1)[0]
    return partition, count


@dataclass(kw_only=True)
class Settling:
    """A 10,000-bet round published up to its result, its task's partition, and the node to kill."""

    table: str
    partition: int
    head: Tagged
    result: Tagged
    notes: list[str] = field(default_factory=list)


def big(settings: Settings, table: str, seed: int) -> Settling:
    head, result = big_round(seed, table)
    return Settling(
        table=table,
        partition=partition_of(table.encode(), settings.partitions),
        head=head,
        result=result,
    )


def kill_mid_settlement(
    nodes: Nodes,
    feeder: Feeder,
    round_: Settling,
    target: Callable[[Settling], int | list[int]],
    meanwhile: Callable[[], None] | None = None,
) -> tuple[list[int], float]:
    """Publish the round up to its result and let it be read; publish the result and kill -9 the
    nodes `target` names the moment the first of its settlements is written (the transaction is
    open); then run `meanwhile` (an outage, say). Returns the nodes and the stall: kill to the
    round's 10,000 settlements committed."""
    settings = feeder.settings
    feeder.publish(round_.head)
    wait_committed(settings, round_.partition, timeout=SETTLED)
    named = target(round_)
    victims = named if isinstance(named, list) else [named]
    marks = Watermarks(settings, settings.topic_settlements)
    try:
        with feeder.quiet():
            before = marks.total()
            # not feeder.publish: with two nodes gone the result could not be acknowledged
            feeder._send(*round_.result[0])
            waited = marks.wait_above(before, timeout=120)
            for node in victims:
                nodes.kill9(node)
            killed = time.monotonic()
    finally:
        marks.close()
    say(f"{round_.table}: nodes {victims} killed {waited:.2f} s after the result, mid-settlement")
    if meanwhile is not None:
        meanwhile()
    feeder.producer.flush(timeout=SETTLED)
    wait_committed(settings, round_.partition, timeout=SETTLED)
    stall = time.monotonic() - killed
    say(f"{round_.table}: all {BIG} bets settled {stall:.1f} s after the kill")
    return victims, stall


def audit(
    fault: str,
    workers: Cluster,
    sent: Tagged,
    started: float,
    stall: float,
    note: str,
) -> Figures:
    """`croupier verify` and the wallet emulator over everything sent so far (tests/chaos).

    A read of the audit that times out (kafka-python's offset lookup, 30 s, right after a
    leadership moved back to a restarted node) is read again with new clients, twice at most:
    what it would find is not changed by reading later, and a finding still fails at once.
    """
    for attempt in range(3):
        try:
            return check(fault, workers, sent, started, note=f"stall {stall:5.1f} s; {note}")
        except KafkaTimeoutError as error:
            if attempt == 2:
                raise
            say(f"{fault}: the audit's read timed out ({error}); reading again")
    raise AssertionError("unreachable")
