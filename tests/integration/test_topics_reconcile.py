"""`croupier topics` on a real broker: a topic made by hand is brought to plan, and reported."""

from __future__ import annotations

import io
import time

import pytest
from kafka.admin import (  # type: ignore[import-untyped]
    ConfigResource,
    ConfigResourceType,
    KafkaAdminClient,
    NewTopic,
)

from services.topics import ensure, plan
from tests.kafka import delete_topics, isolated_settings

pytestmark = pytest.mark.kafka


def _config(address: str, topic: str) -> dict[str, str]:
    admin = KafkaAdminClient(bootstrap_servers=address)
    try:
        described = admin.describe_configs(
            [ConfigResource(ConfigResourceType.TOPIC, topic)], config_filter="all"
        )
    finally:
        admin.close()
    return {key: entry["value"] for key, entry in described["topic"][topic].items()}


def test_a_topic_made_by_hand_with_wrong_retention_and_policy_is_fixed_and_reported(
    kafka: str,
) -> None:
    settings = isolated_settings(kafka, partitions=2, retention_ms=3_600_000)
    admin = KafkaAdminClient(bootstrap_servers=kafka)
    try:
        admin.create_topics(
            [
                NewTopic(
                    name=settings.topic_bets,
                    num_partitions=2,
                    replication_factor=1,
                    topic_configs={"cleanup.policy": "compact", "retention.ms": "-1"},
                ),
                NewTopic(
                    name=settings.topic_state,
                    num_partitions=2,
                    replication_factor=1,
                    topic_configs={"cleanup.policy": "delete"},
                ),
            ]
        )
    finally:
        admin.close()

    first = io.StringIO()
    assert ensure(settings, first) == []
    report = first.getvalue()
    assert f"changed {settings.topic_bets}: cleanup.policy compact -> delete\n" in report
    assert f"changed {settings.topic_bets}: retention.ms -1 -> 3600000\n" in report
    assert f"changed {settings.topic_bets}: max.message.bytes 1048588" not in report
    assert f"changed {settings.topic_state}: cleanup.policy delete -> compact\n" in report
    assert f"created {settings.topic_rounds}: 2 partitions" in report
    bets = _config(kafka, settings.topic_bets)
    assert (bets["cleanup.policy"], bets["retention.ms"]) == ("delete", "3600000")
    assert _config(kafka, settings.topic_state)["cleanup.policy"] == "compact"
    assert _config(kafka, settings.topic_rounds)["retention.ms"] == "3600000"

    second = io.StringIO()
    assert ensure(settings, second) == []
    again = second.getvalue()
    assert "\nchanged " not in "\n" + again and "\ncreated " not in "\n" + again
    assert again.endswith("nothing changed: every topic exists with its planned configuration\n")
    assert again.count("ok      ") == len(plan(settings))


def test_a_smaller_input_topic_is_reported_as_a_problem_with_what_to_do(kafka: str) -> None:
    settings = isolated_settings(kafka, partitions=3)
    admin = KafkaAdminClient(bootstrap_servers=kafka)
    try:
        admin.create_topics(
            [NewTopic(name=settings.topic_bets, num_partitions=2, replication_factor=1)]
        )
    finally:
        admin.close()
    out = io.StringIO()
    [problem] = ensure(settings, out)
    assert f"{settings.topic_rounds} has 3 partitions and {settings.topic_bets} has 2" in problem
    assert f"cannot fix {settings.topic_bets}: 2 partitions, 3 planned" in out.getvalue()
    assert f"--alter --topic {settings.topic_bets} --partitions 3" in out.getvalue()


def test_the_topics_of_two_test_settings_are_deleted_together_and_no_other(kafka: str) -> None:
    first, second, kept = (isolated_settings(kafka, partitions=1) for _ in range(3))
    for settings in (first, second, kept):
        assert ensure(settings, io.StringIO()) == []
    ours = {p.name for s in (first, second) for p in plan(s)}

    delete_topics(first, second)

    admin = KafkaAdminClient(bootstrap_servers=kafka)
    try:
        deadline = time.monotonic() + 30  # a deletion is done by the controller, soon after
        while ours & set(admin.list_topics()) and time.monotonic() < deadline:
            time.sleep(0.2)
        there = set(admin.list_topics())
    finally:
        admin.close()
    assert not ours & there
    assert {p.name for p in plan(kept)} <= there
