"""Test support for the real broker: where it is, isolated topics, worker processes, publishing."""

from __future__ import annotations

import io
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import msgspec
import pytest
from kafka import KafkaAdminClient, KafkaProducer  # type: ignore[import-untyped]
from kafka.errors import KafkaError  # type: ignore[import-untyped]
from pydantic import SecretStr

from services.audit.reader import committed_lag
from services.security import clients
from services.settings import Settings
from services.simulation.streams import Streams, interleave
from services.topics import ensure, plan

ROOT = Path(__file__).resolve().parents[1]
OUTPUT = ROOT / "test-output"


def bootstrap() -> str:
    """KAFKA_BOOTSTRAP if set; else a testcontainers broker where Docker runs; else the local one."""
    given = os.environ.get("KAFKA_BOOTSTRAP")
    if given:
        return given
    if shutil.which("docker") and _docker_engine():
        return _container()
    return "127.0.0.1:9092"


def _docker_engine() -> bool:
    try:
        return subprocess.run(["docker", "info"], capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


_CONTAINER: list[object] = []


def _container() -> str:
    from testcontainers.community.kafka import KafkaContainer

    kafka = KafkaContainer("confluentinc/cp-kafka:7.9.0").with_kraft()
    kafka.start()
    _CONTAINER.append(kafka)
    address: str = kafka.get_bootstrap_server()
    return address


def reachable(address: str) -> bool:
    host, _, port = address.split(",")[0].rpartition(":")
    try:
        with socket.create_connection((host, int(port)), timeout=3):
            return True
    except OSError:
        return False


_MADE: list[Settings] = []
"""Every isolated_settings made in this test session, whose topics `session_broker` deletes."""


@contextmanager
def session_broker() -> Iterator[str]:
    """The broker of a test session (its tests fail, saying how to start one, if none answers);
    when the session ends, the topics of the isolated settings made for it are deleted, so that a
    developer's long-lived broker does not grow by every run's gigabytes."""
    address = bootstrap()
    if not reachable(address):
        pytest.fail(
            f"no Kafka broker at {address}: run `make kafka-up` (or set KAFKA_BOOTSTRAP) and retry",
            pytrace=False,
        )
    yield address
    made = [s for s in _MADE if s.kafka_bootstrap == address]
    if made and reachable(address):
        try:
            delete_topics(*made)
        except KafkaError as error:  # the tests' outcome stands; only the clean-up is left
            print(f"could not delete the test topics on {address}: {error!r}", file=sys.stderr)


def isolated_settings(address: str, partitions: int = 4, **extra: object) -> Settings:
    """Settings with topic names, group and transactional ids of their own, for one test."""
    tag = f"t{uuid.uuid4().hex[:10]}"
    names = {
        f"topic_{role}": f"{tag}-{role.replace('_', '-')}"
        for role in (
            "rounds",
            "bets",
            "settlements",
            "refunds",
            "adjustments",
            "table_stats",
            "rejected",
            "accepted",
            "state",
        )
    }
    made = Settings(
        kafka_bootstrap=address,
        partitions=partitions,
        output_partitions=partitions,
        group_id=f"{tag}-settlement",
        transactional_prefix=f"{tag}-settlement",
        **names,  # type: ignore[arg-type]
        **extra,  # type: ignore[arg-type]
    )
    _MADE.append(made)
    return made


def environment(settings: Settings) -> dict[str, str]:
    """The environment that gives a worker process these settings."""
    env = dict(os.environ)
    for name, value in settings.model_dump().items():
        if isinstance(value, SecretStr):
            value = value.get_secret_value()
        if value is not None:
            env[f"CROUPIER_{name.upper()}"] = str(value)
    env["KAFKA_BOOTSTRAP"] = settings.kafka_bootstrap
    return env


def create_topics(settings: Settings) -> None:
    problems = ensure(settings, out=io.StringIO())
    assert problems == []


def delete_topics(*every: Settings) -> None:
    """Delete every topic of these settings, all on one broker (a benchmark's gigabytes, once
    measured; a test session's topics, once it ends)."""
    admin = KafkaAdminClient(**clients.kafka_python(every[0]))
    try:
        there = set(admin.list_topics())
        names = [p.name for settings in every for p in plan(settings) if p.name in there]
        for start in range(0, len(names), 100):
            admin.delete_topics(names[start : start + 100])
    finally:
        admin.close()


def publish(settings: Settings, streams: Streams, seed: int = 0) -> None:
    """Publish both topics in a random allowed interleaving, keyed by table_id, acks=all."""
    producer = KafkaProducer(
        **clients.kafka_python(settings), acks="all", enable_idempotence=True, linger_ms=5
    )
    topics = {"rounds": settings.topic_rounds, "bets": settings.topic_bets}
    try:
        for kind, raw in interleave(streams, random.Random(seed)):
            producer.send(topics[kind], value=raw, key=table_of(raw))
        producer.flush()
    finally:
        producer.close()


def table_of(raw: bytes) -> bytes | None:
    """The key upstream gives a message: its table_id, or None when it has none."""
    try:
        value = msgspec.json.decode(raw)
    except msgspec.DecodeError:
        return None
    table = value.get("table_id") if isinstance(value, dict) else None
    return table.encode() if isinstance(table, str) else None


@contextmanager
def workers(
    settings: Settings, count: int, name: str = "worker"
) -> Iterator[list[subprocess.Popen[bytes]]]:
    """`croupier worker` processes, stopped (and their logs kept under test-output/) at the end."""
    OUTPUT.mkdir(exist_ok=True)
    started: list[subprocess.Popen[bytes]] = []
    try:
        for n in range(count):
            started.append(spawn(settings, f"{name}-{n}"))
        yield started
    finally:
        for process in started:
            stop(process)


def spawn(settings: Settings, name: str, loglevel: str = "warning") -> subprocess.Popen[bytes]:
    with open(log_path(settings, name), "wb") as log:
        return subprocess.Popen(
            [sys.executable, "-m", "services.cli", "worker", "--loglevel", loglevel],
            cwd=ROOT,
            env=environment(settings),
            stdout=log,
            stderr=subprocess.STDOUT,
        )


def log_path(settings: Settings, name: str) -> Path:
    """Where a worker spawned with this name writes its log."""
    OUTPUT.mkdir(exist_ok=True)
    return OUTPUT / f"{settings.group_id}-{name}.log"


def stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def wait_caught_up(settings: Settings, timeout: float = 120.0) -> None:
    """Until the workers have committed every input message."""
    deadline = time.monotonic() + timeout
    lag = -1
    while time.monotonic() < deadline:
        try:
            lag = committed_lag(settings, settings.group_id, list(settings.inputs))
        except KafkaError:  # a young broker: the group coordinator may not be elected yet
            lag = -1
        if lag == 0:
            return
        time.sleep(0.5)
    raise TimeoutError(f"workers still {lag} input messages behind after {timeout:.0f} s")
