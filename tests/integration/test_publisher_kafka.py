"""The publisher on a real broker: each table's events in order on its partition, keyed by table;
`croupier publish` stops at an invalid line, and publishing again is a harmless redelivery."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

import msgspec
import pytest

from schemas.codec import encode
from services.audit.reader import read_topic
from services.publisher import InvalidEvent, Publisher
from services.settings import Settings
from services.settlement.fold import Fold
from services.simulation.simulator import Config, Simulation
from tests.kafka import ROOT, create_topics, environment, isolated_settings


def _topic(settings: Settings, name: str) -> list[tuple[bytes, bytes, int]]:
    return [(m.key or b"", m.value, m.partition) for m in read_topic(settings, name)]


def _fold(rounds: list[bytes], bets: list[bytes]) -> Counter[bytes]:
    fold = Fold()
    out = [r for raw in rounds for r in fold.feed("rounds", raw)]
    out += [r for raw in bets for r in fold.feed("bets", raw)]
    return Counter(encode(r) for r in out)


def test_each_table_keeps_its_order_on_one_partition_keyed_by_its_id(kafka: str) -> None:
    settings = isolated_settings(kafka, partitions=4)
    create_topics(settings)
    emitted = list(Simulation(Config(tables=6, players=30, rounds=6, seed=8)))
    with Publisher.from_settings(settings) as publisher:
        for emission in emitted:
            publisher.publish(emission.message.value)
        bet = next(e.message.value for e in emitted if e.message.topic == "bets")
        with pytest.raises(InvalidEvent, match="seq"):
            publisher.publish(bet.replace(b'"seq":', b'"seq":-1,"_":'))
    for role, name in (("rounds", settings.topic_rounds), ("bets", settings.topic_bets)):
        stored = _topic(settings, name)
        sent = [e.message for e in emitted if e.message.topic == role]
        assert len(stored) == len(sent)
        per_table: dict[bytes, list[bytes]] = defaultdict(list)
        partitions: dict[bytes, set[int]] = defaultdict(set)
        for key, value, partition in stored:
            assert msgspec.json.decode(value)["table_id"].encode() == key
            per_table[key].append(value)
            partitions[key].add(partition)
        for key, values in per_table.items():
            assert values == [m.value for m in sent if m.key == key]
            assert len(partitions[key]) == 1


def test_publish_stops_at_an_invalid_line_and_publishing_again_is_a_redelivery(
    kafka: str, tmp_path: Path
) -> None:
    settings = isolated_settings(kafka, partitions=2)
    create_topics(settings)
    env = environment(settings)
    events = tmp_path / "events.jsonl"
    simulate = [sys.executable, "-m", "services.cli", "simulate", "--rounds", "4", "--seed", "3"]
    subprocess.run([*simulate, "--out", str(events)], cwd=ROOT, env=env, check=True, timeout=60)
    lines = events.read_bytes().splitlines()
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b"\n".join([*lines[:10], b'{"type":"bet.placed","v":1}', *lines[10:]]) + b"\n")
    publish = [sys.executable, "-m", "services.cli", "publish", str(bad)]

    stopped = subprocess.run(
        publish, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert stopped.returncode == 1
    assert f"{bad}:11: invalid event (invalid_field): event_id: missing required field" in (
        stopped.stderr
    )
    skipped = subprocess.run(
        [*publish, "--skip-invalid"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert skipped.returncode == 0, skipped.stderr
    assert f"{len(lines)} events published" in skipped.stderr
    assert "1 invalid lines skipped" in skipped.stderr

    rounds = [v for _, v, _ in _topic(settings, settings.topic_rounds)]
    bets = [v for _, v, _ in _topic(settings, settings.topic_bets)]
    assert len(rounds) + len(bets) == 10 + len(lines)
    once = [line for line in lines if msgspec.json.decode(line)["type"].startswith("round.")]
    once_bets = [line for line in lines if line not in set(once)]
    assert _fold(rounds, bets) == _fold(once, once_bets)
