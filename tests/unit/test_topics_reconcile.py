"""`croupier topics` reconciles: what differs from the plan is changed, what cannot be is said."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from services import topics
from services.blocking import finish
from services.security.denied import AccessDenied
from services.settings import Settings
from services.topics import Change, Existing, plan, reconcile

SETTINGS = Settings(partitions=4, output_partitions=4, retention_ms=604_800_000)


def _as_planned() -> dict[str, Existing]:
    return {
        p.name: Existing(partitions=p.partitions, config=dict(p.config)) for p in plan(SETTINGS)
    }


def test_topics_exactly_as_planned_need_nothing() -> None:
    verdict = reconcile(SETTINGS, plan(SETTINGS), _as_planned())
    assert verdict.changes == [] and verdict.cannot == [] and verdict.problems == []
    assert verdict.right == [p.name for p in plan(SETTINGS)]


def test_a_wrong_retention_and_cleanup_policy_are_changed_to_the_plan() -> None:
    existing = _as_planned()
    existing["rounds"] = Existing(
        partitions=4,
        config={"cleanup.policy": "compact", "retention.ms": "-1", "max.message.bytes": "1048588"},
    )
    verdict = reconcile(SETTINGS, plan(SETTINGS), existing)
    assert verdict.changes == [
        Change(topic="rounds", key="cleanup.policy", old="compact", new="delete"),
        Change(topic="rounds", key="retention.ms", old="-1", new="604800000"),
    ]
    assert "rounds" not in verdict.right and verdict.problems == []


def test_a_state_topic_created_with_delete_policy_is_made_compacted() -> None:
    existing = _as_planned()
    planned = existing["settlement-state"].config
    existing["settlement-state"] = Existing(
        partitions=4, config={**planned, "cleanup.policy": "delete"}
    )
    verdict = reconcile(SETTINGS, plan(SETTINGS), existing)
    assert verdict.changes == [
        Change(topic="settlement-state", key="cleanup.policy", old="delete", new="compact")
    ]


def test_a_key_the_cluster_does_not_report_is_set() -> None:
    existing = _as_planned()
    existing["refunds"] = Existing(partitions=4, config={"cleanup.policy": "delete"})
    verdict = reconcile(SETTINGS, plan(SETTINGS), existing)
    assert verdict.changes == [
        Change(topic="refunds", key="retention.ms", old=None, new="604800000")
    ]


def test_too_few_output_partitions_are_reported_with_the_command_but_do_not_stop_workers() -> None:
    existing = _as_planned()
    existing["settlements"] = Existing(partitions=2, config=dict(existing["settlements"].config))
    verdict = reconcile(SETTINGS, plan(SETTINGS), existing)
    assert verdict.problems == []
    [line] = verdict.cannot
    assert line.startswith("settlements: 2 partitions, 4 planned")
    assert "--alter --topic settlements --partitions 4" in line


def test_inputs_that_are_not_co_partitioned_are_a_problem() -> None:
    existing = _as_planned()
    existing["bets"] = Existing(partitions=3, config=dict(existing["bets"].config))
    verdict = reconcile(SETTINGS, plan(SETTINGS), existing)
    [problem] = verdict.problems
    assert "rounds has 4 partitions and bets has 3" in problem
    assert "co-partitioned" in problem
    assert any(line.startswith("bets: 3 partitions, 4 planned") for line in verdict.cannot)


def test_a_state_topic_with_fewer_partitions_than_the_inputs_is_a_problem() -> None:
    existing = _as_planned()
    existing["settlement-state"] = Existing(
        partitions=2, config=dict(existing["settlement-state"].config)
    )
    verdict = reconcile(SETTINGS, plan(SETTINGS), existing)
    [problem] = verdict.problems
    assert problem.startswith("settlement-state has 2 partitions and the inputs 4")


def test_topics_that_do_not_exist_are_left_to_creation() -> None:
    verdict = reconcile(SETTINGS, plan(SETTINGS), {})
    assert verdict == reconcile(SETTINGS, [], {})
    assert verdict.changes == []
    assert verdict.right == verdict.cannot == verdict.problems == []


REPLICATED = Settings(
    partitions=4, output_partitions=4, retention_ms=604_800_000, replication_factor=3
)


def test_every_replicated_topic_is_planned_with_two_in_sync_replicas() -> None:
    assert {p.name: p.config["min.insync.replicas"] for p in plan(REPLICATED)} == {
        p.name: "2" for p in plan(REPLICATED)
    }


def test_an_unreplicated_topic_is_planned_without_min_insync_replicas() -> None:
    assert not [p.name for p in plan(SETTINGS) if "min.insync.replicas" in p.config]


def test_a_replicated_topic_left_at_the_brokers_one_in_sync_replica_is_changed_to_two() -> None:
    existing = {
        p.name: Existing(partitions=4, config=dict(p.config), replicas=3) for p in plan(REPLICATED)
    }
    existing["bets"] = Existing(
        partitions=4, config={**existing["bets"].config, "min.insync.replicas": "1"}, replicas=3
    )
    verdict = reconcile(REPLICATED, plan(REPLICATED), existing)
    assert verdict.changes == [Change(topic="bets", key="min.insync.replicas", old="1", new="2")]
    assert "bets" not in verdict.right and verdict.cannot == []


def test_a_topic_with_fewer_replicas_than_planned_is_reported_with_what_to_do() -> None:
    existing = {
        p.name: Existing(partitions=4, config=dict(p.config), replicas=3) for p in plan(REPLICATED)
    }
    existing["settlements"] = Existing(
        partitions=4, config=dict(existing["settlements"].config), replicas=1
    )
    verdict = reconcile(REPLICATED, plan(REPLICATED), existing)
    assert verdict.changes == [] and verdict.problems == []
    [line] = verdict.cannot
    assert line.startswith("settlements: 1 replicas, 3 planned")
    assert "kafka-reassign-partitions.sh" in line
    assert "settlements" not in verdict.right


def test_more_in_sync_replicas_than_replicas_is_refused_at_start() -> None:
    with pytest.raises(ValidationError, match="CROUPIER_MIN_INSYNC_REPLICAS to at most"):
        Settings(replication_factor=2, min_insync_replicas=3)


class _Admin:
    """kafka-python's admin client as `_create` uses it, answering each topic with a code."""

    def __init__(self, codes: dict[str, int]) -> None:
        self.codes = codes

    def create_topics(self, topics: list[Any], raise_errors: bool) -> dict[str, Any]:
        assert raise_errors is False
        return {
            "topics": [
                {"name": t.name, "error_code": self.codes.get(t.name, 0), "error_message": None}
                for t in topics
            ]
        }

    def close(self) -> None:
        pass


def test_a_topic_another_made_meanwhile_is_not_reported_as_created(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    wanted = plan(SETTINGS)[:3]
    already = wanted[1].name
    monkeypatch.setattr(topics, "_admin", lambda _: _Admin({already: 36}))  # TOPIC_ALREADY_EXISTS
    assert topics._create(SETTINGS, wanted) == {wanted[0].name, wanted[2].name}


def test_a_creation_the_brokers_refuse_says_who_lacks_which_permission(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    wanted = plan(SETTINGS)[:2]
    refused = {wanted[0].name: 29}  # TOPIC_AUTHORIZATION_FAILED
    monkeypatch.setattr(topics, "_admin", lambda _: _Admin(refused))
    with pytest.raises(AccessDenied) as denied:
        topics._create(SETTINGS, wanted)
    assert "refused Create" in str(denied.value)
    assert "croupier topics` with the admin's settings" in str(denied.value)


class _Answer:
    def __init__(self, body: dict[str, Any]) -> None:
        self.body = body

    def to_object(self) -> dict[str, Any]:
        return self.body


class _Broker:
    def __init__(self, node: int) -> None:
        self.nodeId = node


class _LaggingClient:
    """Two brokers; the second does not know the topic for its first `lag` answers."""

    def __init__(self, lag: int) -> None:
        self.lag = lag
        self.asked: list[int] = []
        self.cluster = self

    def brokers(self) -> list[_Broker]:
        return [_Broker(1), _Broker(2)]

    async def send(self, node: int, request: Any) -> _Answer:
        self.asked.append(node)
        unknown = node == 2 and self.asked.count(2) <= self.lag
        entries = [] if unknown else [{"config_names": "retention.ms", "config_value": "1000"}]
        resource = {
            "error_code": 3 if unknown else 0,
            "error_message": "",
            "resource_name": "rounds",
            "config_entries": entries,
        }
        return _Answer({"resources": [resource]})


def _cluster(client: _LaggingClient) -> topics.Cluster:
    cluster = topics.Cluster.__new__(topics.Cluster)
    cluster._client = client
    return cluster


def test_a_broker_yet_to_read_a_topic_s_creation_is_asked_again() -> None:
    client = _LaggingClient(lag=2)
    found = finish(_cluster(client).configs(["rounds"], {"retention.ms"}))
    assert found == {"rounds": {"retention.ms": "1000"}}
    assert client.asked == [1, 2, 1, 2, 1, 2]


def test_a_broker_that_never_learns_of_the_topic_fails_after_the_settling_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(topics, "SETTLE", 0.3)
    with pytest.raises(topics.UnknownTopicOrPartitionError, match="rounds"):
        finish(_cluster(_LaggingClient(lag=1000)).configs(["rounds"], {"retention.ms"}))
