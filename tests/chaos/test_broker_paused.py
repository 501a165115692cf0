"""The broker paused (SIGSTOP) past the workers' sessions, mid-stream, then resumed.

While it is stopped, librdkafka declares each worker's group session lost and sets its generation
to -1, but a worker blocked in a commit serves no rebalance callback until that commit returns.
When the broker answers again, the group coordinator still counts the old members; a worker that
sent what it folded meanwhile with generation -1 would have it accepted (docs/DESIGN.md, "Fencing
zombies"). Nothing may be lost or repeated.
"""

from __future__ import annotations

import time

from services.partitioner import partition_of
from tests.chaos.audit import check
from tests.chaos.cluster import SEED, Feeder, cluster, say, seeded, wait_committed
from tests.chaos.conftest import Broker
from tests.chaos.streams import big_round, tables
from tests.kafka import create_topics, isolated_settings

PAUSES = 2


def test_the_broker_paused_past_the_sessions_and_resumed_loses_and_repeats_nothing(
    broker: Broker,
) -> None:
    rng = seeded("paused broker")
    started = time.monotonic()
    settings = isolated_settings(broker.bootstrap, partitions=4, session_timeout_ms=6000)
    create_topics(settings)
    background = tables(SEED + 5, tables=12, rounds=20)
    head, result = big_round(SEED + 5, "STOP")
    with cluster(settings, "paused-broker") as workers:
        workers.keep(2)
        assert not workers.healthy(timeout=90), "the workers did not start"
        feeder = Feeder(settings, background, rate=len(background) / 40).start()
        feeder.publish(head)
        wait_committed(settings, partition_of(b"STOP", settings.partitions))
        for pause in range(PAUSES):
            if pause == 0:
                feeder.publish(result)  # the broker stops while 10,000 bets are being settled
                time.sleep(rng.uniform(0.05, 0.4))
            else:
                time.sleep(rng.uniform(3.0, 8.0))
            broker.pause()
            stopped = rng.uniform(8.0, 14.0)  # past the workers' 6 s sessions
            time.sleep(stopped)
            broker.resume()
            say(f"broker: paused {stopped:.1f} s, resumed")
        feeder.finish()
        check(
            "broker paused",
            workers,
            feeder.sent,
            started,
            note=f"{PAUSES} SIGSTOPs past the sessions, one during a 10,000-bet settlement",
        )
