"""kill -9 of the broker coordinating a task's transactions while it settles 10,000 bets, and of
the broker coordinating the workers' consumer group."""

from __future__ import annotations

import time

from tests.chaos.cluster import SEED, Feeder, cluster
from tests.chaos_cluster.faults import (
    FULL,
    WORKERS,
    Settling,
    audit,
    background,
    big,
    cluster_settings,
    kill_mid_settlement,
    probe,
)
from tests.chaos_cluster.nodes import Nodes


def test_the_coordinators_of_a_tasks_transactions_and_of_the_group_killed_lose_nothing(
    nodes: Nodes,
) -> None:
    settings = cluster_settings(nodes)
    sent: list[tuple[str, bytes]] = []
    with cluster(settings, "coordinators") as workers:
        workers.keep(WORKERS)
        assert not workers.healthy(timeout=120), "the workers did not start"
        phases = [("transaction", "C")] + ([("group", "D")] if FULL else [])
        for n, (role, letter) in enumerate(phases):
            started = time.monotonic()
            feed = background(SEED + 40 + n, letter)
            feeder = Feeder(settings, feed, rate=len(feed) / 40).start()
            round_ = big(settings, f"BIG{letter}", SEED + 40 + n)
            before = probe(feeder, round_.partition, SEED + 50 + n)
            what: list[str] = []

            def coordinator(r: Settling, role: str = role, what: list[str] = what) -> int:
                if role == "transaction":
                    health = workers.owner(r.partition).health() or {}
                    txn = health["transactional_ids"][str(r.partition)]
                    what.append(f"the coordinator of task {r.partition}'s transactions")
                    return nodes.transaction_coordinator(txn)
                what.append("the group coordinator")
                return nodes.group_coordinator(settings.group_id)

            [node], stall = kill_mid_settlement(nodes, feeder, round_, coordinator)
            back = nodes.whole()
            feeder.finish()
            sent += feeder.sent
            audit(
                f"{role} coordinator",
                workers,
                sent,
                started,
                stall,
                f"node {node} was {what[0]}, killed mid-settlement of 10,000 bets; a round before "
                f"the fault settled in {before:.1f} s; node back and in sync {back:.0f} s after",
            )
