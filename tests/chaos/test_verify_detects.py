"""`croupier verify` on a real cluster catches what the faults must never cause (not vacuous)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from typing import Any

import msgspec
from kafka import KafkaProducer  # type: ignore[import-untyped]

from services.audit.reader import read_topic
from tests.chaos.cluster import SEED, Feeder, cluster, say, wait_caught_up
from tests.chaos.conftest import Broker
from tests.chaos.streams import tables
from tests.kafka import ROOT, create_topics, environment, isolated_settings


def _verify(env: dict[str, str]) -> tuple[int, dict[str, Any]]:
    done = subprocess.run(
        [sys.executable, "-m", "services.cli", "verify", "--json", "--quiet", "--limit", "100"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        timeout=300,
    )
    summary: dict[str, Any] = json.loads(done.stdout)
    return done.returncode, summary


def test_verify_reports_every_kind_of_damage_done_to_committed_output(broker: Broker) -> None:
    started = time.monotonic()
    settings = isolated_settings(broker.bootstrap, partitions=2, session_timeout_ms=6000)
    create_topics(settings)
    env = environment(settings)
    with cluster(settings, "detects") as workers:
        workers.keep(1)
        feeder = Feeder(settings, tables(SEED + 4, tables=4, rounds=6), rate=2000).start()
        feeder.finish()
        wait_caught_up(settings)
    code, clean = _verify(env)
    assert (code, clean["ok"]) == (0, True), clean
    say(f"verify: a clean cluster passes ({clean['checked']} records, exit 0)")

    settlements = [m.value for m in read_topic(settings, settings.topic_settlements)]
    first, second = (msgspec.json.decode(raw) for raw in settlements[:2])
    forged = {**second, "payout": second["payout"] + 1000}
    foreign = {**first, "settlement_id": "forged-id", "bet_id": "no-such-bet"}
    late = [
        b'{"type":"round.opened","v":1,"event_id":"L-e0","table_id":"LATE","round_id":"L1",'
        b'"at":"2026-12-01T10:00:00Z","game":"sicbo"}',
        b'{"type":"bet.placed","v":1,"event_id":"L-e1","table_id":"LATE","round_id":"L1",'
        b'"at":"2026-12-01T10:00:05Z","bet_id":"L1-b1","player_id":"P1","seq":1,"kind":"big",'
        b'"pick":[],"stake":100,"currency":"EUR"}',
        b'{"type":"round.opened","v":1,"event_id":"W-e0","table_id":"WAIT","round_id":"W1",'
        b'"at":"2026-12-01T10:00:00Z","game":"sicbo"}',
        b'{"type":"bet.placed","v":1,"event_id":"W-e1","table_id":"WAIT","round_id":"W1",'
        b'"at":"2026-12-01T10:00:30Z","bet_id":"W1-b1","player_id":"P2","seq":1,"kind":"big",'
        b'"pick":[],"stake":100,"currency":"EUR"}',
        b'{"type":"round.betting_closed","v":1,"event_id":"L-e2","table_id":"LATE","round_id":"L1",'
        b'"at":"2026-12-01T10:01:00Z","last_seq":1}',
        b'{"type":"round.result","v":1,"event_id":"L-e3","table_id":"LATE","round_id":"L1",'
        b'"at":"2026-12-01T10:02:00Z","dice":[4,5,6]}',
    ]
    producer = KafkaProducer(bootstrap_servers=settings.kafka_bootstrap, acks="all")
    try:
        producer.send(settings.topic_settlements, value=settlements[0])
        producer.send(settings.topic_settlements, value=msgspec.json.encode(forged))
        producer.send(settings.topic_settlements, value=msgspec.json.encode(foreign))
        for raw in late:
            topic = settings.topic_bets if b"bet.placed" in raw else settings.topic_rounds
            producer.send(topic, value=raw, key=raw.split(b'"table_id":"')[1].split(b'"')[0])
        producer.flush()
    finally:
        producer.close()

    code, damaged = _verify(env)
    assert code == 1 and damaged["ok"] is False
    assert damaged["counts"] == {"missing": 2, "duplicated": 2, "unexpected": 1, "differing": 1}
    findings = {(f["kind"], f["key"]) for f in damaged["findings"]}
    assert ("duplicated", first["settlement_id"]) in findings
    assert ("differing", second["settlement_id"]) in findings
    assert ("unexpected", "forged-id") in findings
    assert ("missing", "LATE") in findings  # its table-stats
    assert sum(kind == "missing" for kind, _ in findings) == 2  # and its settlement
    assert [(p["bet_id"], p["age_s"]) for p in damaged["pending"]] == [("W1-b1", 90.0)]
    say(
        f"verify: the damaged cluster fails with {damaged['counts']} and 1 pending bet "
        f"({time.monotonic() - started:.1f} s)"
    )
