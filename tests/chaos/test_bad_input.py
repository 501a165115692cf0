"""A flood of unreadable input, mixed with good events, is dead-lettered and stops nothing."""

from __future__ import annotations

import time

from tests.chaos.audit import check
from tests.chaos.cluster import SEED, Feeder, cluster, say, seeded
from tests.chaos.conftest import Broker
from tests.chaos.streams import bad_flood, mix, tables
from tests.kafka import create_topics, isolated_settings


def test_a_flood_of_bad_input_is_rejected_verbatim_and_good_events_still_settle(
    broker: Broker,
) -> None:
    rng = seeded("bad-input")
    started = time.monotonic()
    settings = isolated_settings(broker.bootstrap, partitions=4, session_timeout_ms=6000)
    create_topics(settings)
    good = tables(SEED, tables=12, rounds=12)
    flood = bad_flood(SEED, count=3000, oversized=10)
    messages = mix(rng, good, flood)
    say(f"bad-input: {len(good)} good and {len(flood)} bad events, 2 workers")
    with cluster(settings, "bad-input") as workers:
        workers.keep(2)
        feeder = Feeder(settings, messages, rate=400).start()
        feeder.finish()
        check("bad input", workers, feeder.sent, started, note=f"{len(flood)} bad, 10 of ~900 KB")
