"""`croupier verify` after retention: it checks the window left, and still finds what is wrong."""

from __future__ import annotations

import json
import subprocess
import sys

import msgspec
import pytest
from kafka import KafkaProducer, TopicPartition  # type: ignore[import-untyped]
from kafka.admin import KafkaAdminClient, NewTopic  # type: ignore[import-untyped]

from services.audit.reader import Message, read_topic
from services.audit.verify import audit
from services.settings import Settings
from services.simulation.streams import Profile, Streams, generate
from tests.kafka import (
    ROOT,
    create_topics,
    environment,
    isolated_settings,
    publish,
    wait_caught_up,
    workers,
)

pytestmark = pytest.mark.kafka

CUT = {("rounds", 0): 3, ("bets", 0): 2, ("rounds", 1): 2, ("bets", 1): 4}
"""Which fraction of each input partition is removed: 1/3 of rounds[0] and 1/2 of bets[0] (the
bets lost more), 1/2 of rounds[1] and 1/4 of bets[1] (the rounds lost more)."""


def _live(seed: int, tables: int, rounds: int) -> Streams:
    """Tables playing side by side: their rounds one after another, all tables at each step
    (every contract case: repeats, conflicts, late and invalid bets, cancellations, bad lines)."""
    live = Streams()
    for n in range(rounds):
        step = generate(
            seed + n,
            tables=tables,
            rounds=1,
            profile=Profile(bets_per_round=(1, 10)),
            first_round=n,
        )
        live.rounds.extend(step.rounds)
        live.bets.extend(step.bets)
    return live


def _delete_heads(settings: Settings) -> dict[tuple[str, int], int]:
    """Remove the head of every input partition (as retention would); where each now starts."""
    admin = KafkaAdminClient(bootstrap_servers=settings.kafka_bootstrap)
    ends: dict[tuple[str, int], int] = {}
    try:
        for role, topic in (("rounds", settings.topic_rounds), ("bets", settings.topic_bets)):
            for p in (0, 1):
                size = max(m.offset for m in _read(settings, topic) if m.partition == p) + 1
                ends[role, p] = size // CUT[role, p]
        admin.delete_records(
            {
                TopicPartition(
                    settings.topic_rounds if role == "rounds" else settings.topic_bets, p
                ): start
                for (role, p), start in ends.items()
            }
        )
    finally:
        admin.close()
    return ends


def _read(settings: Settings, topic: str) -> list[Message]:
    return list(read_topic(settings, topic))


def _copy_without(settings: Settings, drop: set[str]) -> Settings:
    """Settings whose settlements topic holds every committed settlement but `drop`'s ids."""
    copy = settings.topic_settlements + "-copy"
    admin = KafkaAdminClient(bootstrap_servers=settings.kafka_bootstrap)
    try:
        admin.create_topics(
            [NewTopic(name=copy, num_partitions=settings.output_partitions, replication_factor=1)]
        )
    finally:
        admin.close()
    producer = KafkaProducer(bootstrap_servers=settings.kafka_bootstrap, acks="all")
    try:
        for m in _read(settings, settings.topic_settlements):
            if msgspec.json.decode(m.value)["settlement_id"] not in drop:
                producer.send(copy, value=m.value, key=m.key, partition=m.partition)
        producer.flush()
    finally:
        producer.close()
    return settings.model_copy(update={"topic_settlements": copy})


def test_verify_after_the_inputs_lost_their_heads_checks_the_window_and_finds_a_real_loss(
    kafka: str,
) -> None:
    settings = isolated_settings(kafka, partitions=2)
    create_topics(settings)
    streams = _live(23, tables=8, rounds=14)
    publish(settings, streams, seed=23)
    with workers(settings, 1):
        wait_caught_up(settings)
    whole = audit(settings)
    assert whole.ok and whole.window.whole and whole.report.not_checkable == 0
    opened_at = {
        (e["table_id"], e["round_id"]): (m.partition, m.offset)
        for m in _read(settings, settings.topic_rounds)
        if m.value.startswith(b'{"type":"round.opened"') and (e := msgspec.json.decode(m.value))
    }

    starts = _delete_heads(settings)
    cut = audit(settings)
    report = cut.report
    assert report.counts() == {"missing": 0, "duplicated": 0, "unexpected": 0, "differing": 0}
    assert cut.ok and not cut.window.whole
    assert {(w.topic, w.partition): w.start for w in cut.window.inputs} == {
        (settings.topic_rounds if role == "rounds" else settings.topic_bets, p): start
        for (role, p), start in starts.items()
    }
    assert all(w.first_at is not None for w in cut.window.inputs)
    assert 0 < report.not_checkable < report.checked
    reasons = {u.reason for u in report.unchecked}
    assert "its round opened before the input window" in reasons
    assert "bets of its round may be before the input window" in reasons
    assert cut.events_in < whole.events_in
    done = subprocess.run(
        [sys.executable, "-m", "services.cli", "verify", "--json", "--quiet"],
        cwd=ROOT,
        env=environment(settings),
        capture_output=True,
        timeout=300,
    )
    summary = json.loads(done.stdout)
    assert done.returncode == 0 and summary["ok"] is True
    assert summary["window"]["whole"] is False
    assert summary["not_checkable_total"] == report.not_checkable

    settlements = [
        msgspec.json.decode(m.value) for m in _read(settings, settings.topic_settlements)
    ]
    last = max(settlements, key=lambda s: s["round_id"])  # a table's last round: in the window
    before = next(
        s
        for s in settlements
        if opened_at[s["table_id"], s["round_id"]][1]
        < starts["rounds", opened_at[s["table_id"], s["round_id"]][0]]
    )
    damaged = audit(_copy_without(settings, {last["settlement_id"], before["settlement_id"]}))
    assert [(f.kind, f.topic, f.key) for f in damaged.report.findings] == [
        ("missing", "settlements", last["settlement_id"])
    ]
    assert damaged.report.not_checkable == report.not_checkable - 1
