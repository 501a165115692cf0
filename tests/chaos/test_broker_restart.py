"""The broker killed -9 and restarted mid-stream (the suite's own broker, nobody else's)."""

from __future__ import annotations

import random
import time

from tests.chaos.broker_faults import settle_through
from tests.chaos.cluster import say
from tests.chaos.conftest import Broker


def crash(broker: Broker, rng: random.Random) -> None:
    broker.kill9()
    down = time.monotonic()
    time.sleep(rng.uniform(0.5, 3.0))
    broker.up()
    say(f"broker: killed -9 and back after {time.monotonic() - down:.1f} s")


def test_the_broker_killed_and_restarted_mid_stream_loses_and_repeats_nothing(
    broker: Broker,
) -> None:
    settle_through(
        broker,
        "broker kill -9",
        crash,
        seed=3,
        table="CRASH",
        note="2 broker crashes, one during a 10,000-bet settlement",
    )
