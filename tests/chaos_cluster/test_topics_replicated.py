"""`croupier topics` on a three-node cluster: three replicas, two in sync, reconciled."""

from __future__ import annotations

import io

from kafka.admin import (  # type: ignore[import-untyped]
    ConfigResource,
    ConfigResourceType,
)

from services.topics import ensure, plan
from tests.chaos_cluster.nodes import Nodes
from tests.kafka import isolated_settings


def test_topics_are_created_with_three_replicas_and_two_in_sync_and_kept_so(nodes: Nodes) -> None:
    settings = isolated_settings(nodes.bootstrap, replication_factor=3, min_insync_replicas=2)
    out = io.StringIO()
    assert ensure(settings, out=out) == []
    names = [p.name for p in plan(settings)]
    assert out.getvalue().count("'min.insync.replicas': '2'") == len(names)

    def layout(admin: object) -> dict[str, set[int]]:
        return {
            t["name"]: {len(p["replica_nodes"]) for p in t["partitions"]}
            for t in admin.describe_topics(names)  # type: ignore[attr-defined]
        }

    assert nodes.ask(layout) == {name: {3} for name in names}
    admin = nodes.admin()
    try:
        admin.alter_configs(
            [
                ConfigResource(
                    ConfigResourceType.TOPIC,
                    settings.topic_bets,
                    configs={"min.insync.replicas": "1"},
                )
            ]
        )
    finally:
        admin.close()

    def lowered(admin: object) -> None:
        """Until the brokers report the altered value (KRaft applies it a moment later)."""
        resource = ConfigResource(ConfigResourceType.TOPIC, settings.topic_bets)
        found = admin.describe_configs([resource])["topic"][settings.topic_bets]  # type: ignore[attr-defined]
        if found["min.insync.replicas"]["value"] != "1":
            raise KeyError("min.insync.replicas not altered yet")

    nodes.ask(lowered)
    again = io.StringIO()
    assert ensure(settings, out=again) == []
    assert f"changed {settings.topic_bets}: min.insync.replicas 1 -> 2" in again.getvalue()
    last = io.StringIO()
    assert ensure(settings, out=last) == []
    assert "nothing changed: every topic exists with its planned configuration" in last.getvalue()
