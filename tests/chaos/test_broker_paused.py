"""The broker paused (SIGSTOP) past the workers' sessions, mid-stream, then resumed.

While it is stopped, librdkafka declares each worker's group session lost and sets its generation
to -1, but a worker blocked in a commit serves no rebalance callback until that commit returns.
When the broker answers again it is fenced until its next heartbeat, and transactions its
coordinator ends meanwhile lose their markers (docs/BROKER-FAULTS.md, "A single broker killed -9
or paused"). Nothing may be lost or repeated, and no worker may stop.

Static members (the StatefulSet's workers) meet one more thing: librdkafka's consumer whose
session expired that way is refused when it joins again ("fenced by another consumer with the same
group.instance.id", a fatal error; librdkafka issue 3437), and returned nothing from then on. The
soak found a whole floor stalled so; each worker now joins again with a new consumer.
"""

from __future__ import annotations

import random
import time

from tests.chaos.broker_faults import settle_through
from tests.chaos.cluster import say
from tests.chaos.conftest import Broker


def pause(broker: Broker, rng: random.Random, low: float = 8.0, high: float = 14.0) -> None:
    broker.pause()
    stopped = rng.uniform(low, high)  # past the workers' 6 s sessions
    time.sleep(stopped)
    broker.resume()
    say(f"broker: paused {stopped:.1f} s, resumed")


def long_pause(broker: Broker, rng: random.Random) -> None:
    """Well past the sessions, as the soak's 20 s against 10 s: the members' own session timers
    expire and they join again while the coordinator is still stopped."""
    pause(broker, rng, 15.0, 18.0)


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


def test_static_members_through_a_paused_broker_join_again_and_lose_nothing(
    broker: Broker,
) -> None:
    settle_through(
        broker,
        "broker paused, static members",
        long_pause,
        seed=6,
        table="STIL",
        note="2 SIGSTOPs past the sessions of static members, one during a 10,000-bet settlement",
        static=True,
    )
