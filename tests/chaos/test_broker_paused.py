"""The broker paused (SIGSTOP) past the workers' sessions, mid-stream, then resumed.

While it is stopped, librdkafka declares each worker's group session lost and sets its generation
to -1, but a worker blocked in a commit serves no rebalance callback until that commit returns.
When the broker answers again it is fenced until its next heartbeat, and transactions its
coordinator ends meanwhile lose their markers (docs/BROKER-FAULTS.md, "A single broker killed -9
or paused"). Nothing may be lost or repeated, and no worker may stop.
"""

from __future__ import annotations

import random
import time

from tests.chaos.broker_faults import settle_through
from tests.chaos.cluster import say
from tests.chaos.conftest import Broker


def pause(broker: Broker, rng: random.Random) -> None:
    broker.pause()
    stopped = rng.uniform(8.0, 14.0)  # past the workers' 6 s sessions
    time.sleep(stopped)
    broker.resume()
    say(f"broker: paused {stopped:.1f} s, resumed")


def test_the_broker_paused_past_the_sessions_and_resumed_loses_and_repeats_nothing(
    broker: Broker,
) -> None:
    settle_through(
        broker,
        "broker paused",
        pause,
        seed=5,
        table="STOP",
        note="2 SIGSTOPs past the sessions, one during a 10,000-bet settlement",
    )
