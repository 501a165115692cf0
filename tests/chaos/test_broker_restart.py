"""The broker killed -9 and restarted mid-stream (the suite's own broker, nobody else's)."""

from __future__ import annotations

import time

from services.partitioner import partition_of
from tests.chaos.audit import check
from tests.chaos.cluster import SEED, Feeder, cluster, say, seeded, wait_committed
from tests.chaos.conftest import Broker
from tests.chaos.streams import big_round, tables
from tests.kafka import create_topics, isolated_settings

CRASHES = 2


def test_the_broker_killed_and_restarted_mid_stream_loses_and_repeats_nothing(
    broker: Broker,
) -> None:
    rng = seeded("broker")
    started = time.monotonic()
    settings = isolated_settings(broker.bootstrap, partitions=4, session_timeout_ms=6000)
    create_topics(settings)
    background = tables(SEED + 3, tables=12, rounds=20)
    head, result = big_round(SEED + 3, "CRASH")
    with cluster(settings, "broker") as workers:
        workers.keep(2)
        assert not workers.healthy(timeout=90), "the workers did not start"
        feeder = Feeder(settings, background, rate=len(background) / 40).start()
        feeder.publish(head)
        wait_committed(settings, partition_of(b"CRASH", settings.partitions))
        for crash in range(CRASHES):
            if crash == 0:
                feeder.publish(result)  # the broker dies while 10,000 bets are being settled
                time.sleep(rng.uniform(0.05, 0.4))
            else:
                time.sleep(rng.uniform(3.0, 10.0))
            broker.kill9()
            down = time.monotonic()
            time.sleep(rng.uniform(0.5, 3.0))
            broker.up()
            say(f"broker: killed -9 and back after {time.monotonic() - down:.1f} s")
        feeder.finish()
        check(
            "broker kill -9",
            workers,
            feeder.sent,
            started,
            note=f"{CRASHES} broker crashes, one during a 10,000-bet settlement",
        )
