"""kill -9 of the broker leading the busiest input, then the busiest output partition, while a
10,000-bet round is being settled; the killed node comes back and catches up."""

from __future__ import annotations

import time

from tests.chaos.cluster import SEED, Feeder, cluster
from tests.chaos.streams import BIG
from tests.chaos_cluster.faults import (
    FULL,
    WORKERS,
    Settling,
    audit,
    background,
    big,
    busiest_output,
    cluster_settings,
    kill_mid_settlement,
    probe,
)
from tests.chaos_cluster.nodes import Nodes


def test_the_leaders_of_the_busiest_partitions_killed_mid_settlement_lose_and_repeat_nothing(
    nodes: Nodes,
) -> None:
    settings = cluster_settings(nodes)
    sent: list[tuple[str, bytes]] = []
    with cluster(settings, "leaders") as workers:
        workers.keep(WORKERS)
        assert not workers.healthy(timeout=120), "the workers did not start"
        phases = [("input", "A")] + ([("output", "B")] if FULL else [])
        for n, (side, letter) in enumerate(phases):
            started = time.monotonic()
            feed = background(SEED + 20 + n, letter)
            feeder = Feeder(settings, feed, rate=len(feed) / 40).start()
            round_ = big(settings, f"BIG{letter}", SEED + 20 + n)
            before = probe(feeder, round_.partition, SEED + 30 + n)
            if side == "input":
                topic, partition = settings.topic_bets, round_.partition
                count = BIG
            else:
                partition, count = busiest_output(settings, round_.head)
                topic = settings.topic_settlements

            def leader(r: Settling, topic: str = topic, partition: int = partition) -> int:
                return nodes.leader(topic, partition)

            [node], stall = kill_mid_settlement(nodes, feeder, round_, leader)
            back = nodes.whole()
            feeder.finish()
            sent += feeder.sent
            audit(
                f"{side} leader kill",
                workers,
                sent,
                started,
                stall,
                f"node {node} led {topic.split('-', 1)[1]}-{partition} ({count} of the round's "
                f"settlements); a round before the fault settled in {before:.1f} s; "
                f"node back and in sync {back:.0f} s after",
            )
