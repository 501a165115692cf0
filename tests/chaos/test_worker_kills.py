"""kill -9 of workers at random moments, also while a 10,000-bet round is being settled."""

from __future__ import annotations

import random
import time

from services.partitioner import partition_of
from tests.chaos.audit import check
from tests.chaos.cluster import (
    SEED,
    Cluster,
    Feeder,
    Watermarks,
    cluster,
    copies,
    say,
    seeded,
    wait_committed,
)
from tests.chaos.conftest import Broker
from tests.chaos.streams import BIG, big_round, tables
from tests.kafka import create_topics, isolated_settings

KILLS = 22
BIG_ROUNDS = 3


def kill_while_settling(
    workers: Cluster, feeder: Feeder, table_id: str, seed: int, rng: random.Random, targeted: bool
) -> str:
    """Publish a 10,000-bet round, let it be read, publish its result, kill its owner mid-way.

    Targeted: kill the moment the first of its settlements is written (the transaction is open);
    otherwise after a random delay of 0.05-0.6 s (a settlement takes 0.15-0.6 s here).
    """
    head, result = big_round(seed, table_id)
    partition = partition_of(table_id.encode(), workers.settings.partitions)
    feeder.publish(head)
    wait_committed(workers.settings, partition)
    owner = workers.owner(partition)
    marks = Watermarks(workers.settings, workers.settings.topic_settlements)
    try:
        if targeted:
            with feeder.quiet():
                before = marks.total()
                feeder.publish(result)
                delay = marks.wait_above(before)
                workers.kill(owner)
        else:
            feeder.publish(result)
            delay = rng.uniform(0.05, 0.6)
            time.sleep(delay)
            if owner.alive():
                workers.kill(owner)
    finally:
        marks.close()
    workers.keep(2)
    how = "at its first settlement" if targeted else "at random"
    say(
        f"kills: {table_id} ({BIG} bets) owner {owner.name} killed {delay:.2f} s after result, {how}"
    )
    return f"{delay:.2f}s"


def test_workers_killed_at_random_moments_lose_nothing_and_credit_nothing_twice(
    broker: Broker,
) -> None:
    rng = seeded("kills")
    started = time.monotonic()
    settings = isolated_settings(broker.bootstrap, partitions=4, session_timeout_ms=6000)
    create_topics(settings)
    background = tables(SEED, tables=16, rounds=30)
    big_at = sorted(rng.sample(range(2, KILLS - 2), BIG_ROUNDS))
    delays = []
    with cluster(settings, "kills") as workers:
        workers.keep(2)
        feeder = Feeder(settings, background, rate=len(background) / 80).start()
        say(f"kills: {len(background)} events over 80 s, {KILLS} kills, big rounds at {big_at}")
        while workers.kills < KILLS:
            if big_at and workers.kills >= big_at[0]:
                big_at.pop(0)
                table = f"BIG{len(delays)}"
                targeted = not delays
                delays.append(
                    kill_while_settling(workers, feeder, table, SEED + len(delays), rng, targeted)
                )
                continue
            time.sleep(rng.uniform(0.3, 5.0))
            workers.kill(rng.choice(workers.workers))
            workers.keep(2)
        say(f"kills: {workers.kills} kills done; waiting for the publisher")
        feeder.finish()
        evidence = []
        for n in range(len(delays)):
            written, committed = copies(settings, f'"round_id":"BIG{n}-'.encode())
            evidence.append(f"{written - committed} aborted")
            assert committed == BIG
        note = "big rounds killed after " + ", ".join(
            f"{d} ({e})" for d, e in zip(delays, evidence, strict=True)
        )
        check("worker kill -9", workers, feeder.sent, started, note=note)
