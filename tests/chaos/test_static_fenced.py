"""A static member fenced for good joins the group again, and settles its share of the floor.

librdkafka's consumer dies of a fatal error once the coordinator refuses it as "fenced by another
consumer with the same group.instance.id": after its session expired while the coordinator did
not answer (a paused or cut-off broker, librdkafka issue 3437; the soak found a whole floor
stalled so), or when another process takes its id for a while. The second is what this test does,
as it happens at will: a consumer with worker 0's id joins while the floor is fed, then goes. The
worker must replace its dead consumer and run tasks again; nothing may be lost or repeated.
"""

from __future__ import annotations

import time

from confluent_kafka import Consumer

from tests.chaos.audit import check
from tests.chaos.cluster import SEED, Feeder, cluster, say
from tests.chaos.conftest import Broker
from tests.chaos.streams import tables
from tests.kafka import create_topics, isolated_settings


def test_a_static_member_fenced_by_its_id_taken_joins_again_and_loses_nothing(
    broker: Broker,
) -> None:
    started = time.monotonic()
    settings = isolated_settings(broker.bootstrap, partitions=4, session_timeout_ms=6000)
    create_topics(settings)
    floor = tables(SEED + 7, tables=12, rounds=20)
    with cluster(settings, "static-fenced") as workers:
        ids = [f"{settings.group_id}-{n}" for n in range(2)]
        for instance in ids:
            workers.spawn(instance=instance)
        assert not workers.healthy(timeout=90), "the workers did not start"
        feeder = Feeder(settings, floor, rate=len(floor) / 40).start()
        time.sleep(5.0)
        impostor = Consumer(
            {
                "bootstrap.servers": settings.kafka_bootstrap,
                "group.id": settings.group_id,
                "group.instance.id": ids[0],
                "session.timeout.ms": 6000,
                "enable.auto.commit": False,  # it takes the id, never the offsets
            }
        )
        impostor.subscribe(list(settings.inputs))
        deadline = time.monotonic() + 8.0
        while time.monotonic() < deadline:  # joins, and fences worker 0's consumer
            impostor.poll(0.2)
        impostor.close()
        say("static-fenced: a consumer held worker 0's group.instance.id for 8 s, then left")
        feeder.finish()
        check("static member fenced", workers, feeder.sent, started, note="worker 0's id taken 8 s")
        deadline = time.monotonic() + 60
        running: dict[str, list[int]] = {}
        while time.monotonic() < deadline:
            running = {w.name: (w.health() or {}).get("tasks", []) for w in workers.workers}
            if all(running.values()):
                break
            time.sleep(0.5)
        assert all(running.values()), f"a worker runs no task after it was fenced: {running}"
        fenced = workers.workers[0].log.read_text(errors="replace")
        assert "a new consumer joins the group" in fenced, "worker 0 was never fenced"
