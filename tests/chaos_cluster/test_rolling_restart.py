"""A rolling restart of all three nodes while rounds settle: each node stopped cleanly (its
leaderships handed over), restarted, and back in every ISR before the next one goes."""

from __future__ import annotations

import time

from tests.chaos.cluster import SEED, Feeder, cluster, seeded
from tests.chaos_cluster.faults import WORKERS, audit, background, cluster_settings, probe
from tests.chaos_cluster.nodes import NODES, Nodes


def test_a_rolling_restart_of_every_node_while_rounds_settle_loses_and_repeats_nothing(
    nodes: Nodes,
) -> None:
    rng = seeded("rolling")
    settings = cluster_settings(nodes)
    with cluster(settings, "rolling") as workers:
        workers.keep(WORKERS)
        assert not workers.healthy(timeout=120), "the workers did not start"
        started = time.monotonic()
        feed = background(SEED + 60, "E", count=16, rounds=20)
        feeder = Feeder(settings, feed, rate=len(feed) / 90).start()
        before = probe(feeder, 0, SEED + 61)
        stalls = []
        for n in NODES:
            time.sleep(rng.uniform(1.0, 4.0))
            nodes.stop(n)
            stalls.append(probe(feeder, rng.randrange(settings.partitions), SEED + 62 + n))
            nodes.start(n)
            nodes.whole()
        feeder.finish()
        audit(
            "rolling restart",
            workers,
            feeder.sent,
            started,
            max(stalls),
            "nodes 1, 2, 3 stopped and restarted in turn; a round published as each went "
            f"settled in {', '.join(f'{s:.1f}' for s in stalls)} s (before: {before:.1f} s)",
        )
