"""One node down for a long stretch (under-replicated, still settling), then two nodes down (no
quorum: the workers wait, lose nothing, repeat nothing, and resume when the nodes are back)."""

from __future__ import annotations

import time

from tests.chaos.cluster import SEED, Feeder, cluster, seeded, wait_caught_up
from tests.chaos_cluster.faults import (
    FULL,
    SETTLED,
    WORKERS,
    audit,
    background,
    big,
    cluster_settings,
    kill_mid_settlement,
    probe,
)
from tests.chaos_cluster.nodes import NODES, Nodes

LONG = 90.0 if FULL else 30.0
"""Seconds one node stays down."""
OUTAGE = 75.0 if FULL else 20.0
"""Seconds two nodes stay down before they are restarted (restarting takes some more). In full,
longer than a transaction may stay open (aiokafka's transaction_timeout_ms, 60 s): should the
coordinator abort the open one, the task rebuilds from what was committed (in the runs so far
it had no quorum to abort it in, and the transaction committed when the nodes were back)."""


def test_one_node_down_for_a_long_stretch_leaves_every_round_settled_on_two_replicas(
    nodes: Nodes,
) -> None:
    rng = seeded("one-down")
    settings = cluster_settings(nodes)
    with cluster(settings, "one-down") as workers:
        workers.keep(WORKERS)
        assert not workers.healthy(timeout=120), "the workers did not start"
        started = time.monotonic()
        feed = background(SEED + 70, "F", count=16, rounds=int(LONG / 3))
        feeder = Feeder(settings, feed, rate=len(feed) / (LONG + 20)).start()
        before = probe(feeder, 1, SEED + 71)
        node = rng.choice(NODES)
        nodes.kill9(node)
        down = time.monotonic()
        stall = probe(feeder, rng.randrange(settings.partitions), SEED + 72)
        under = nodes.under_replicated()
        alive = nodes.brokers()
        assert alive == sorted(set(NODES) - {node}), f"brokers alive {alive}, node {node} killed"
        assert under, "nothing under-replicated with a node down"
        time.sleep(max(0.0, LONG / 2 - (time.monotonic() - down)))
        caught = wait_caught_up(settings, stall=SETTLED)
        assert not workers.healthy(timeout=60), "the workers suffered with one node down"
        time.sleep(max(0.0, LONG - (time.monotonic() - down)))
        back = nodes.whole()
        feeder.finish()
        audit(
            "one node down",
            workers,
            feeder.sent,
            started,
            stall,
            f"node {node} down {LONG:.0f} s, {len(under)} partitions under-replicated, every "
            f"input committed while it was down (caught up in {caught:.1f} s); a round before "
            f"the fault settled in {before:.1f} s; back and in sync {back:.0f} s after",
        )


def test_two_nodes_down_stop_settlement_without_loss_and_it_resumes_when_they_return(
    nodes: Nodes,
) -> None:
    rng = seeded("two-down")
    settings = cluster_settings(nodes)
    with cluster(settings, "two-down") as workers:
        workers.keep(WORKERS)
        assert not workers.healthy(timeout=120), "the workers did not start"
        started = time.monotonic()
        feed = background(SEED + 80, "G", count=12, rounds=15)
        feeder = Feeder(settings, feed, rate=len(feed) / (OUTAGE + 30)).start()
        round_ = big(settings, "BIGG", SEED + 80)
        before = probe(feeder, round_.partition, SEED + 81)
        killed = sorted(rng.sample(NODES, 2))
        moments: dict[str, float] = {}

        def outage() -> None:
            """No quorum for OUTAGE seconds: every worker must stay up, then both come back."""
            down = time.monotonic()
            while time.monotonic() - down < OUTAGE:
                dead = [w.name for w in workers.workers if not w.alive()]
                assert not dead, f"workers exited while the cluster had no quorum: {dead}"
                time.sleep(1.0)
            moments["restarted"] = time.monotonic() - down
            for node in killed:
                nodes.start(node, wait=False)
            for node in killed:
                nodes.start(node)
            moments["answering"] = time.monotonic() - down

        # Both nodes go while the round's 10,000 settlements are being written: the
        # transaction is open, and neither it nor anything else can be acknowledged.
        _, stall = kill_mid_settlement(nodes, feeder, round_, lambda r: killed, outage)
        back = nodes.whole()
        feeder.finish()
        audit(
            "two nodes down",
            workers,
            feeder.sent,
            started,
            stall,
            f"nodes {killed[0]} and {killed[1]} killed mid-settlement of 10,000 bets (no "
            f"quorum), restarted after {moments['restarted']:.0f} s and answering after "
            f"{moments['answering']:.0f} s; the round settled {stall - moments['answering']:.1f} "
            f"s after that; a round before the fault settled in {before:.1f} s; in sync "
            f"{back:.0f} s after",
        )
