"""The broker-fault runs of the suite's own broker: a floor of background tables and a
10,000-bet round, the fault applied twice (the first time while the round is being settled),
then `check`."""

from __future__ import annotations

import random
import time
from collections.abc import Callable

from services.partitioner import partition_of
from tests.chaos.audit import check
from tests.chaos.cluster import SEED, Feeder, cluster, seeded, wait_committed
from tests.chaos.conftest import Broker
from tests.chaos.streams import big_round, tables
from tests.kafka import create_topics, isolated_settings

Fault = Callable[[Broker, random.Random], None]
"""Apply the fault and end it (the broker answers again when it returns)."""


def settle_through(
    broker: Broker,
    name: str,
    fault: Fault,
    *,
    seed: int,
    table: str,
    note: str,
    static: bool = False,
) -> None:
    """Two workers settle a floor while `fault` strikes twice; nothing lost, repeated or changed.
    `table` plays the 10,000-bet round; with `static`, the workers are static group members."""
    rng = seeded(name)
    started = time.monotonic()
    settings = isolated_settings(broker.bootstrap, partitions=4, session_timeout_ms=6000)
    create_topics(settings)
    background = tables(SEED + seed, tables=12, rounds=20)
    head, result = big_round(SEED + seed, table)
    with cluster(settings, name.replace(" ", "-")) as workers:
        for n in range(2):
            workers.spawn(instance=f"{settings.group_id}-{n}" if static else None)
        assert not workers.healthy(timeout=90), "the workers did not start"
        feeder = Feeder(settings, background, rate=len(background) / 40).start()
        feeder.publish(head)
        wait_committed(settings, partition_of(table.encode(), settings.partitions))
        for strike in range(2):
            if strike == 0:
                feeder.publish(result)  # the fault strikes while 10,000 bets are being settled
                time.sleep(rng.uniform(0.05, 0.4))
            else:
                time.sleep(rng.uniform(3.0, 8.0))
            fault(broker, rng)
        feeder.finish()
        check(name, workers, feeder.sent, started, note=note)
