"""A worker taking over restores its tasks from the state topic, or refolds, or refuses, loudly."""

from __future__ import annotations

import json
import re
import time
import urllib.error
import urllib.request
from collections import Counter
from pathlib import Path

from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer  # type: ignore[import-untyped]
from kafka.structs import TopicPartition  # type: ignore[import-untyped]

from schemas.codec import encode
from services.ports import free_port
from services.settings import Settings
from services.settlement.fold import Fold
from services.simulation.streams import Profile, Streams, generate
from tests.integration.test_pipeline_equals_replay import _committed
from tests.kafka import (
    create_topics,
    isolated_settings,
    log_path,
    publish,
    spawn,
    stop,
    wait_caught_up,
)

READY = re.compile(
    r"tasks \[[0-9, ]*\] ready: (\d+) state records \((\d+) bytes\) restored, "
    r"(\d+) committed events refolded"
)


REWRITTEN = re.compile(r"restores read its state partition from offset (\d+)")


def _ready_lines(path: Path) -> list[tuple[int, int]]:
    """(state records restored, events refolded) of every `tasks ... ready` line of a log."""
    return [
        (int(m.group(1)), int(m.group(3))) for m in READY.finditer(path.read_text(errors="replace"))
    ]


def _settle(settings: Settings, name: str, until: re.Pattern[str] | None = None) -> None:
    """Run one worker until its tasks are ready and all is committed (and its log shows `until`),
    then kill it -9."""
    worker = spawn(settings, name, loglevel="info")
    try:
        deadline = time.monotonic() + 60
        while not _ready_lines(log_path(settings, name)):
            assert time.monotonic() < deadline, f"worker {name} never got its tasks ready"
            assert worker.poll() is None, f"worker {name} exited"
            time.sleep(0.2)
        wait_caught_up(settings)
        deadline = time.monotonic() + 60
        while until is not None and not until.search(log_path(settings, name).read_text()):
            assert time.monotonic() < deadline, f"worker {name} never logged {until.pattern}"
            time.sleep(0.2)
    finally:
        worker.kill()
        worker.wait()


def _two_histories(settings: Settings) -> tuple[Streams, Streams]:
    first = generate(21, tables=6, rounds=8)
    second = generate(22, tables=6, rounds=6, first_round=100)
    create_topics(settings)
    publish(settings, first, seed=1)
    return first, second


def _assert_equals_replay(settings: Settings, first: Streams, second: Streams) -> None:
    both = Streams(rounds=first.rounds + second.rounds, bets=first.bets + second.bets)
    fold = Fold(horizon=settings.horizon)
    records = Counter(encode(r) for kind, raw in both.tagged() for r in fold.feed(kind, raw))
    stats = {t: encode(s) for t in fold.tables if (s := fold.stats(t)) is not None}
    assert _committed(settings) == (records, stats)


def test_a_replacement_restores_from_its_oldest_part_and_settles_as_the_replay(
    kafka: str,
) -> None:
    """Enough bets, a horizon short enough and batches small enough that every task's state
    partition outgrows twice its live state (past the 256 KiB floor) and writes its oldest parts
    again: the replacement reads each state partition from the oldest part's offset, not from
    the start."""
    settings = isolated_settings(
        kafka, partitions=2, instance_id="w0", horizon=2, batch_records=200
    )
    big = Profile(bets_per_round=(150, 250), correct=0.1, void=0.05)
    first = generate(31, tables=4, rounds=40, profile=big)
    second = generate(32, tables=4, rounds=3, profile=big, first_round=100)
    create_topics(settings)
    publish(settings, first, seed=1)
    _settle(settings, "first", until=REWRITTEN)
    starts = [int(n) for n in REWRITTEN.findall(log_path(settings, "first").read_text())]
    assert starts and min(starts) > 0, "no task wrote its oldest parts again"
    publish(settings, second, seed=2)
    _settle(settings, "replacement")
    restored = _ready_lines(log_path(settings, "replacement"))
    assert restored and sum(refolded for _, refolded in restored) == 0
    _assert_equals_replay(settings, first, second)

    # the state copied to a topic of its own, live records only: their offsets are not the ones
    # the positions name, so the restore notices, reads each partition whole, and still restores
    copied = settings.model_copy(update={"topic_state": f"{settings.topic_state}-copy"})
    create_topics(copied)
    _copy_live(settings.topic_state, copied.topic_state, kafka, settings.partitions)
    _settle(copied, "from-copy")
    text = log_path(copied, "from-copy").read_text(errors="replace")
    assert "read whole" in text
    restored = _ready_lines(log_path(copied, "from-copy"))
    assert restored and sum(refolded for _, refolded in restored) == 0
    _assert_equals_replay(copied, first, second)


def _copy_live(source: str, target: str, kafka: str, partitions: int) -> None:
    """What a compacted topic keeps (the last value of each live key), written to another topic,
    partition by partition, in key order: the same state at other offsets."""
    consumer = KafkaConsumer(
        bootstrap_servers=kafka, isolation_level="read_committed", enable_auto_commit=False
    )
    producer = KafkaProducer(bootstrap_servers=kafka, acks="all")
    try:
        for p in range(partitions):
            tp = TopicPartition(source, p)
            consumer.assign([tp])
            consumer.seek_to_beginning(tp)
            end = consumer.end_offsets([tp])[tp]
            live: dict[bytes, bytes] = {}
            while consumer.position(tp) < end:
                for records in consumer.poll(timeout_ms=500).values():
                    for record in records:
                        if record.value is None:
                            live.pop(record.key, None)
                        else:
                            live[record.key] = record.value
            for key, value in sorted(live.items()):
                producer.send(target, key=key, value=value, partition=p)
        producer.flush()
    finally:
        producer.close()
        consumer.close()


def test_a_replacement_restores_its_tasks_from_state_and_refolds_nothing(kafka: str) -> None:
    settings = isolated_settings(kafka, partitions=3, instance_id="w0")
    first, second = _two_histories(settings)
    _settle(settings, "first")
    publish(settings, second, seed=2)
    _settle(settings, "replacement")
    restored = _ready_lines(log_path(settings, "replacement"))
    assert restored, "the replacement logged no `tasks ... ready` line"
    assert sum(records for records, _ in restored) > 0
    assert sum(refolded for _, refolded in restored) == 0
    _assert_equals_replay(settings, first, second)


def _corrupt(settings: Settings, partition: int) -> None:
    producer = KafkaProducer(bootstrap_servers=settings.kafka_bootstrap)
    try:
        producer.send(
            settings.topic_state,
            key=b'["table","T?"]',
            value=b"\x00not a state",
            partition=partition,
        ).get(timeout=30)
    finally:
        producer.close()


def test_an_unreadable_state_is_refolded_from_input_that_starts_at_offset_zero(kafka: str) -> None:
    settings = isolated_settings(kafka, partitions=2, instance_id="w0")
    first, second = _two_histories(settings)
    _settle(settings, "first")
    _corrupt(settings, 0)
    publish(settings, second, seed=2)
    _settle(settings, "refolds")
    log = log_path(settings, "refolds").read_text(errors="replace")
    assert "task 0: refolded from its input: unreadable state record" in log
    assert "task 0: whole state written" in log
    _assert_equals_replay(settings, first, second)
    _settle(settings, "restores")  # the rewritten state is whole again
    assert [n for _, n in _ready_lines(log_path(settings, "restores"))] == [0]


def _health(port: int, timeout: float = 60.0) -> tuple[int, dict[str, object]]:
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=5) as answer:
                return answer.status, json.loads(answer.read())
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read())
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.3)


def test_a_lost_state_over_truncated_input_blocks_its_task_and_says_what_to_do(kafka: str) -> None:
    port = free_port("127.0.0.1")
    settings = isolated_settings(kafka, partitions=2, instance_id="w0", web_port=port)
    _, second = _two_histories(settings)
    _settle(settings, "first")
    _corrupt(settings, 1)
    admin = KafkaAdminClient(bootstrap_servers=kafka)
    try:
        admin.delete_records(
            {TopicPartition(topic, 1): 1 for topic in settings.inputs}, timeout_ms=30000
        )
    finally:
        admin.close()
    publish(settings, second, seed=2)
    worker = spawn(settings, "blocked", loglevel="info")
    try:
        deadline = time.monotonic() + 60
        while True:
            status, body = _health(port)
            if status == 503 or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        assert status == 503
        assert body["status"] == "blocked"
        blocked = body["blocked"]
        assert isinstance(blocked, dict) and list(blocked) == ["1"]
        assert "CROUPIER_PARTIAL_HISTORY" in blocked["1"]
        assert body["tasks"] == [0]
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as answer:
            assert "croupier_tasks_blocked 1" in answer.read().decode()
    finally:
        stop(worker)
    log = log_path(settings, "blocked").read_text(errors="replace")
    assert "task 1 blocked, nothing of it is settled" in log


def test_tasks_that_stay_on_their_worker_when_another_joins_resume_without_a_restore(
    kafka: str,
) -> None:
    settings = isolated_settings(kafka, partitions=4)
    first, second = _two_histories(settings)
    staying = spawn(settings, "staying", loglevel="info")
    joining = None
    try:
        wait_caught_up(settings)
        joining = spawn(settings, "joining", loglevel="info")
        deadline = time.monotonic() + 60
        log = log_path(settings, "staying")
        while "resumed without a restore" not in log.read_text(errors="replace"):
            assert time.monotonic() < deadline, "no task stayed on the first worker"
            time.sleep(0.3)
        publish(settings, second, seed=2)
        wait_caught_up(settings)
    finally:
        stop(staying)
        if joining is not None:
            stop(joining)
    text = log_path(settings, "staying").read_text(errors="replace")
    kept = re.search(r"tasks \[([0-9, ]+)\] stay here: resumed without a restore", text)
    assert kept is not None
    assert 0 < len(kept.group(1).split(",")) < 4
    _assert_equals_replay(settings, first, second)
