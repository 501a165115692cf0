"""Inputs published with librdkafka's default partitioner (CRC32), under worker kill -9: each is
forwarded to its table's partition exactly once and settled once (contract section 1a)."""

from __future__ import annotations

import time

from services.partitioner import crc32_partition
from tests.chaos.audit import check
from tests.chaos.cluster import SEED, Feeder, cluster, say, seeded
from tests.chaos.conftest import Broker
from tests.chaos.streams import tables
from tests.kafka import create_topics, isolated_settings, table_of

KILLS = 8
PARTITIONS = 4


def _crc32(kind: str, raw: bytes) -> int | None:
    """Every bet, and the round events of every other table, on its CRC32 partition: a game
    service on librdkafka's defaults beside one on the Java client's."""
    key = table_of(raw)
    if key is None or (kind == "rounds" and key[-1] % 2 == 0):
        return None
    return crc32_partition(key, PARTITIONS)


def test_misrouted_inputs_are_forwarded_and_settled_once_through_worker_kills(
    broker: Broker,
) -> None:
    rng = seeded("misrouted")
    started = time.monotonic()
    settings = isolated_settings(broker.bootstrap, partitions=PARTITIONS, session_timeout_ms=6000)
    create_topics(settings)
    background = tables(SEED + 1, tables=16, rounds=20)
    with cluster(settings, "misrouted") as workers:
        workers.keep(2)
        feeder = Feeder(settings, background, rate=len(background) / 50, place=_crc32).start()
        say(f"misrouted: {len(background)} events over 50 s on CRC32 partitions, {KILLS} kills")
        while workers.kills < KILLS:
            time.sleep(rng.uniform(0.5, 5.0))
            workers.kill(rng.choice(workers.workers))
            workers.keep(2)
        feeder.finish()
        check("misrouted inputs, worker kill -9", workers, feeder.sent, started)
