"""Workers added and removed while rounds settle: every rebalance hands tasks over cleanly."""

from __future__ import annotations

import time

from services.partitioner import partition_of
from tests.chaos.audit import check
from tests.chaos.cluster import SEED, Feeder, cluster, say, seeded, wait_committed
from tests.chaos.conftest import Broker
from tests.chaos.streams import big_round, tables
from tests.kafka import create_topics, isolated_settings

CYCLES = 3


def test_workers_added_and_removed_while_rounds_settle_lose_and_repeat_nothing(
    broker: Broker,
) -> None:
    rng = seeded("rebalances")
    started = time.monotonic()
    settings = isolated_settings(broker.bootstrap, partitions=4, session_timeout_ms=6000)
    create_topics(settings)
    background = tables(SEED + 1, tables=12, rounds=20)
    head, result = big_round(SEED + 1, "REBAL")
    changes = 0
    with cluster(settings, "rebalances") as workers:
        workers.keep(2)
        feeder = Feeder(settings, background, rate=len(background) / 45).start()
        feeder.publish(head)
        wait_committed(settings, partition_of(b"REBAL", settings.partitions))
        for cycle in range(CYCLES):
            time.sleep(rng.uniform(1.0, 5.0))
            if cycle == 0:
                feeder.publish(result)  # a 10,000-bet round settles while a third worker joins
            joined = workers.spawn()
            changes += 1
            say(f"rebalances: {joined.name} joins (3 workers)")
            time.sleep(rng.uniform(2.0, 8.0))
            leaving = rng.choice(workers.workers)
            say(f"rebalances: {leaving.name} leaves (SIGTERM)")
            workers.stop(leaving)
            changes += 1
        feeder.finish()
        check("rebalances", workers, feeder.sent, started, note=f"{changes} workers joined or left")
