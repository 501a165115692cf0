"""The archive through Kafka: a settled stream archived, its topics emptied as retention would,
and the archive's report the stream's own; each journal archived exactly once across kill -9."""

from __future__ import annotations

import gzip
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import msgspec
import pytest
from kafka import TopicPartition  # type: ignore[import-untyped]
from kafka.admin import KafkaAdminClient  # type: ignore[import-untyped]

from services.archive.source import open_archive
from services.audit.reader import read_topic
from services.settings import Settings
from services.simulation.streams import Profile, Streams, generate, interleave
from tests.kafka import (
    ROOT,
    create_topics,
    environment,
    isolated_settings,
    log_path,
    publish,
    wait_caught_up,
    workers,
)

pytestmark = pytest.mark.kafka

PROFILE = Profile(correct=0.25, void=0.1)
"""Every contract case, with corrections and voids often."""


def _croupier(settings: Settings, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "services.cli", *args],
        cwd=ROOT,
        env=environment(settings),
        capture_output=True,
        timeout=120,
    )


def _delete_everything(settings: Settings) -> None:
    """Every record of the inputs, `accepted` and `rejected` removed, as retention would."""
    admin = KafkaAdminClient(bootstrap_servers=settings.kafka_bootstrap)
    try:
        ends: dict[TopicPartition, int] = {}
        for topic in (
            settings.topic_rounds,
            settings.topic_bets,
            settings.topic_accepted,
            settings.topic_rejected,
        ):
            ends.update(
                {
                    TopicPartition(topic, p): offset
                    for p, offset in _ends(settings, topic).items()
                    if offset > 0
                }
            )
        admin.delete_records(ends)
    finally:
        admin.close()


def _ends(settings: Settings, topic: str) -> dict[int, int]:
    from services.audit.reader import log_starts

    return {p: end for p, (_, end) in log_starts(settings, topic).items()}


def test_a_settled_stream_archived_and_deleted_reports_as_the_stream_itself(
    kafka: str, tmp_path: Path
) -> None:
    settings = isolated_settings(kafka, partitions=2)
    create_topics(settings)
    streams = generate(41, tables=6, rounds=10, profile=PROFILE)
    stream = tmp_path / "stream.jsonl"
    stream.write_bytes(b"".join(raw + b"\n" for _, raw in interleave(streams, random.Random(41))))
    publish(settings, streams, seed=41)
    with workers(settings, 1):
        wait_caught_up(settings)
    archive = tmp_path / "archive"
    done = _croupier(settings, "archive", str(archive), "--once")
    assert done.returncode == 0, done.stderr
    _delete_everything(settings)
    assert list(read_topic(settings, settings.topic_accepted)) == []
    again = _croupier(settings, "archive", str(archive), "--once")
    assert again.returncode == 0 and b"archive: 0 records this run" in again.stderr
    assert b"deleted before" not in again.stderr
    late = _croupier(settings, "archive", str(tmp_path / "late"), "--once")
    assert b"were deleted before they were archived (retention)" in late.stderr

    of_stream = _croupier(settings, "report", "--format", "json", str(stream))
    of_archive = _croupier(settings, "report", "--format", "json", "--archive", str(archive))
    assert of_stream.returncode == of_archive.returncode == 0, of_archive.stderr
    assert of_archive.stdout == of_stream.stdout
    rows = msgspec.json.decode(of_stream.stdout)["rounds"]
    assert sum(r["corrected"] for r in rows) > 0 and sum(r["voided"] for r in rows) > 0
    verified = _croupier(settings, "verify", "--archive", str(archive))
    assert verified.returncode == 0, verified.stdout + verified.stderr

    target = sorted(archive.glob("days/*/accepted-*.jsonl.gz"))[-1]
    data = bytearray(target.read_bytes())
    data[len(data) // 3] ^= 0x20
    target.write_bytes(bytes(data))
    refused = _croupier(settings, "report", "--archive", str(archive))
    assert refused.returncode == 2
    assert str(target.relative_to(archive)) in refused.stderr.decode()


def _start(settings: Settings, archive: Path, n: int) -> subprocess.Popen[bytes]:
    with open(log_path(settings, f"archive-{n}"), "wb") as log:
        return subprocess.Popen(
            [sys.executable, "-m", "services.cli", "archive", str(archive), "--interval", "0.2"],
            cwd=ROOT,
            env=environment(settings),
            stdout=log,
            stderr=subprocess.STDOUT,
        )


def _chunk(seed: int, n: int) -> Streams:
    return generate(seed + n, tables=4, rounds=3, profile=PROFILE, first_round=3 * n)


def test_an_archive_killed_at_random_archives_every_journal_exactly_once(
    kafka: str, tmp_path: Path
) -> None:
    settings = isolated_settings(kafka, partitions=2)
    create_topics(settings)
    archive = tmp_path / "archive"
    rng = random.Random(5)
    kills = 0
    with workers(settings, 1):
        process = _start(settings, archive, 0)
        try:
            for n in range(6):
                publish(settings, _chunk(5, n), seed=n)
                time.sleep(rng.uniform(0.3, 2.5))
                process.send_signal(signal.SIGKILL)
                process.wait()
                kills += 1
                process = _start(settings, archive, n + 1)
            wait_caught_up(settings)
        finally:
            process.send_signal(signal.SIGKILL)
            process.wait()
    done = _croupier(settings, "archive", str(archive), "--once")
    assert done.returncode == 0, done.stderr
    assert kills == 6
    busy = [
        n for n in range(kills) if b"archived" in log_path(settings, f"archive-{n}").read_bytes()
    ]
    assert len(busy) >= 2  # killed after committing, with the topics still being written

    opened = open_archive(str(archive), None, None)
    for role, topic in (
        ("accepted", settings.topic_accepted),
        ("rejected", settings.topic_rejected),
    ):
        on_topic = [(m.partition, m.offset, m.value) for m in read_topic(settings, topic)]
        archived = [(line.p, line.o, line.value) for _, line in opened.records(role)]
        assert len(on_topic) > 10
        assert sorted(archived) == sorted(on_topic)  # each once: no loss, no duplicate
        assert len(set(archived)) == len(archived)
    leftovers = [p for p in archive.rglob("*") if p.is_file() and p.name.endswith(".tmp")]
    assert leftovers == []
    assert all(gzip.decompress(p.read_bytes()) for p in archive.glob("days/*/*.gz"))
