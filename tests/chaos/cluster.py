"""Worker processes to kill, pause and replace, and a publisher feeding them while they suffer."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kafka import KafkaConsumer, KafkaProducer, TopicPartition  # type: ignore[import-untyped]
from kafka.admin import KafkaAdminClient  # type: ignore[import-untyped]
from kafka.errors import KafkaError  # type: ignore[import-untyped]

from services.audit.reader import committed_lag
from services.ports import free_port
from services.settings import Settings
from tests.kafka import ROOT, environment, table_of

LOGS = ROOT / "test-output" / "chaos"


def say(text: str) -> None:
    """Progress on the real standard error, also when pytest captures output."""
    print(f"chaos: {text}", file=sys.__stderr__, flush=True)


@dataclass(kw_only=True)
class Worker:
    """One `croupier worker` process and the port of its /health page."""

    name: str
    port: int
    process: subprocess.Popen[bytes]
    log: Path
    instance: str | None = None
    paused: bool = False

    def alive(self) -> bool:
        return self.process.poll() is None

    def health(self, timeout: float = 2.0) -> dict[str, Any] | None:
        """The /health answer (also when it is a 503), or None when the worker does not answer."""
        answer = self.page("/health", timeout)
        if answer is None:
            return None
        try:
            found: dict[str, Any] = json.loads(answer[1])
            return found
        except ValueError:
            return None

    def page(self, path: str, timeout: float = 2.0) -> tuple[int, bytes] | None:
        """The HTTP status and body of one of the worker's pages, or None when it does not answer."""
        try:
            with urllib.request.urlopen(
                f"http://127.0.0.1:{self.port}{path}", timeout=timeout
            ) as r:
                return r.status, r.read()
        except urllib.error.HTTPError as error:
            return error.code, error.read()
        except OSError:
            return None

    def signal(self, sig: signal.Signals) -> None:
        if self.alive():
            self.process.send_signal(sig)


@dataclass(kw_only=True)
class Cluster:
    """The workers of one fault, and what was done to them."""

    settings: Settings
    name: str
    workers: list[Worker] = field(default_factory=list)
    kills: int = 0
    spawned: int = 0
    retired: list[Worker] = field(default_factory=list)
    logs: Path = LOGS

    def spawn(self, instance: str | None = None) -> Worker:
        """Start a worker; with `instance`, a static group member of that id."""
        self.logs.mkdir(parents=True, exist_ok=True)
        port = free_port("127.0.0.1")
        name = f"{self.name}-{self.spawned}"
        self.spawned += 1
        env = {
            **environment(self.settings),
            "CROUPIER_WEB_PORT": str(port),
            "PYTHONUNBUFFERED": "1",
        }
        if instance is not None:
            env["CROUPIER_INSTANCE_ID"] = instance
        log = self.logs / f"{self.settings.group_id}-{name}.log"
        with open(log, "wb") as out:
            process = subprocess.Popen(
                [sys.executable, "-m", "services.cli", "worker", "--loglevel", "info"],
                cwd=ROOT,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        worker = Worker(name=name, port=port, process=process, log=log, instance=instance)
        self.workers.append(worker)
        return worker

    def keep(self, count: int) -> None:
        """Start workers until `count` are running."""
        self.workers = [w for w in self.workers if w.alive()]
        while len(self.workers) < count:
            self.spawn()

    def kill(self, worker: Worker) -> None:
        """kill -9: no clean shutdown, open transactions left behind."""
        worker.signal(signal.SIGKILL)
        worker.process.wait()
        self.kills += 1
        self.workers.remove(worker)
        self.retired.append(worker)

    def replace(self, worker: Worker) -> Worker:
        """kill -9, and at once a replacement with the same instance id (a restarted pod)."""
        self.kill(worker)
        return self.spawn(worker.instance)

    def stop(self, worker: Worker) -> None:
        """A clean shutdown (SIGTERM), as an operator scaling down does."""
        _terminate(worker)
        self.workers.remove(worker)
        self.retired.append(worker)

    def owners(self) -> dict[int, Worker]:
        """Which worker runs the task of each partition, by their /health pages."""
        found: dict[int, Worker] = {}
        for worker in self.workers:
            answer = worker.health() if worker.alive() and not worker.paused else None
            for p in (answer or {}).get("tasks", []):
                found[p] = worker
        return found

    def owner(self, partition: int, timeout: float = 60.0) -> Worker:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = self.owners().get(partition)
            if found is not None:
                return found
            time.sleep(0.1)
        raise TimeoutError(f"no worker took partition {partition} within {timeout:.0f} s")

    def balanced(self, timeout: float = 60.0) -> None:
        """Until every worker runs at least one task and every partition has one (a new group
        waits for the broker's initial rebalance delay, 3 s, before it takes a second member)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            answers = [w.health() for w in self.workers]
            tasks = [set((a or {}).get("tasks", [])) for a in answers]
            if all(tasks) and set().union(*tasks) == set(range(self.settings.partitions)):
                return
            time.sleep(0.2)
        raise TimeoutError(f"the workers did not share the tasks within {timeout:.0f} s")

    def pending(self) -> int:
        total = 0
        for worker in self.workers:
            answer = worker.health() if worker.alive() and not worker.paused else None
            total += (answer or {}).get("pending_bets", 0)
        return total

    def healthy(self, timeout: float = 60.0) -> list[str]:
        """Problems with the workers: dead, not answering /health, or partitions nobody runs."""
        deadline = time.monotonic() + timeout
        problems = ["not checked"]
        while problems and time.monotonic() < deadline:
            problems = [
                f"{w.name} exited with {w.process.poll()}" for w in self.workers if not w.alive()
            ]
            answers = {w.name: w.health() for w in self.workers if w.alive()}
            problems += [
                f"{name}: /health does not answer" for name, a in answers.items() if a is None
            ]
            problems += [
                f"{name}: {a}" for name, a in answers.items() if a and a.get("status") != "ok"
            ]
            tasks = {p for a in answers.values() if a for p in a.get("tasks", [])}
            idle = sorted(set(range(self.settings.partitions)) - tasks)
            if idle:
                problems.append(f"partitions {idle} have no task on any worker")
            if problems:
                time.sleep(0.5)
        return problems

    def close(self) -> None:
        for worker in self.workers:
            if worker.paused:
                worker.signal(signal.SIGCONT)
            _terminate(worker)


def _terminate(worker: Worker) -> None:
    if worker.alive():
        worker.process.send_signal(signal.SIGTERM)
        try:
            worker.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            worker.process.kill()
            worker.process.wait()


@contextmanager
def cluster(settings: Settings, name: str) -> Iterator[Cluster]:
    """Workers for one fault; every process is gone at the end, whatever happened."""
    group = Cluster(settings=settings, name=name)
    try:
        yield group
    finally:
        group.close()


class Feeder:
    """Publishes (topic kind, message) pairs in order at a steady rate from a thread, acks=all.

    Each message keeps its place in its topic's order (one idempotent producer, one thread), so the
    fold of `sent` is the fold of what the topics hold.
    """

    def __init__(
        self,
        settings: Settings,
        messages: list[tuple[str, bytes]],
        rate: float,
        place: Callable[[str, bytes], int | None] | None = None,
    ) -> None:
        """`place` gives a message's partition (None: its key's, murmur2), for a publisher that
        uses another partitioner."""
        self.settings = settings
        self.messages = messages
        self.rate = rate
        self.place = place
        self.producer = KafkaProducer(
            bootstrap_servers=settings.kafka_bootstrap,
            acks="all",
            enable_idempotence=True,
            linger_ms=5,
            max_request_size=2 * 1024 * 1024,
            delivery_timeout_ms=180_000,
        )
        self.errors: list[str] = []
        self.sent: list[tuple[str, bytes]] = []
        self.stopped = threading.Event()
        self.gate = threading.Event()
        self.gate.set()
        self.lock = threading.Lock()
        self.held = 0.0
        self.thread = threading.Thread(target=self._run, name="feeder", daemon=True)

    def start(self) -> Feeder:
        self.thread.start()
        return self

    def publish(self, messages: list[tuple[str, bytes]]) -> None:
        """Send at once (from the calling thread) and wait until every message is acknowledged."""
        for kind, raw in messages:
            self._send(kind, raw)
        self.producer.flush(timeout=180)

    def _send(self, kind: str, raw: bytes, key: bytes | None = None) -> None:
        topic = self.settings.topic_rounds if kind == "rounds" else self.settings.topic_bets
        partition = None if self.place is None else self.place(kind, raw)
        future = self.producer.send(topic, value=raw, key=key or table_of(raw), partition=partition)
        future.add_errback(lambda error: self.errors.append(repr(error)))
        self.sent.append((kind, raw))

    @contextmanager
    def quiet(self) -> Iterator[None]:
        """Hold the background sends until the workers caught up: only what the caller publishes
        meanwhile is being settled, so the first record written after it is one of its own."""
        self.gate.clear()
        held = time.monotonic()
        with self.lock:
            self.producer.flush(timeout=180)
        wait_caught_up(self.settings)
        try:
            yield
        finally:
            self.held += time.monotonic() - held
            self.gate.set()

    def _run(self) -> None:
        started = time.monotonic()
        for n, (kind, raw) in enumerate(self.messages):
            if self.stopped.is_set():
                return
            ahead = started + self.held + n / self.rate - time.monotonic()
            if ahead > 0:
                time.sleep(ahead)
            while not self._send_unless_held(kind, raw):
                self.gate.wait()

    def _send_unless_held(self, kind: str, raw: bytes) -> bool:
        with self.lock:
            if not self.gate.is_set():
                return False
            self._send(kind, raw)
            return True

    def finish(self, timeout: float = 300.0) -> None:
        """Wait until every message is sent and acknowledged; fail on any lost send."""
        self.thread.join(timeout)
        self.producer.flush(timeout=timeout)
        self.producer.close()
        assert not self.errors, f"the publisher lost {len(self.errors)} sends: {self.errors[:3]}"


def wait_caught_up(settings: Settings, timeout: float = 240.0, stall: float = 90.0) -> float:
    """Until the workers committed every input message; returns the seconds it took.

    Fails early when the lag has not moved for `stall` seconds (a partition that never advances).
    """
    started = moved = time.monotonic()
    lag: int | str = "unknown"
    while time.monotonic() - started < timeout:
        try:
            now = committed_lag(settings, settings.group_id, list(settings.inputs))
        except Exception as error:  # the broker may be coming back up
            now = repr(error)
        if now == 0:
            return time.monotonic() - started
        if now != lag:
            lag, moved = now, time.monotonic()
        elif time.monotonic() - moved > stall:
            raise TimeoutError(f"no progress for {stall:.0f} s (lag {lag}); see the logs in {LOGS}")
        time.sleep(0.5)
    raise TimeoutError(f"workers still behind after {timeout:.0f} s (lag {lag}); see {LOGS}")


SEED = int(os.environ.get("CHAOS_SEED") or time.time_ns() % 1_000_000)
"""The run's seed: every fault draws its streams and moments from it; CHAOS_SEED repeats a run."""


def seeded(name: str) -> random.Random:
    """The random source of a fault."""
    return random.Random(f"{name}-{SEED}")


def wait_committed(settings: Settings, partition: int, timeout: float = 120.0) -> None:
    """Until the group committed partition `partition` of both inputs up to their current ends."""
    tps = [TopicPartition(topic, partition) for topic in settings.inputs]
    consumer = KafkaConsumer(bootstrap_servers=settings.kafka_bootstrap, group_id=None)
    admin = KafkaAdminClient(bootstrap_servers=settings.kafka_bootstrap)
    try:
        ends = consumer.end_offsets(tps)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                offsets = admin.list_group_offsets({settings.group_id: None})
            except KafkaError:  # a young broker: the group coordinator may not be elected yet
                offsets = {}
            committed = offsets.get(settings.group_id, {})
            if all(_offset(committed, tp) >= ends[tp] for tp in tps):
                return
            time.sleep(0.2)
        raise TimeoutError(f"partition {partition} not committed up to {ends} in {timeout:.0f} s")
    finally:
        consumer.close()
        admin.close()


def _offset(committed: dict[TopicPartition, Any], tp: TopicPartition) -> int:
    """A partition's committed offset; 0 when none was ever committed (an empty partition)."""
    meta = committed.get(tp)
    return int(meta.offset) if meta is not None and meta.offset >= 0 else 0


def copies(settings: Settings, marker: bytes) -> tuple[int, int]:
    """Settlements whose value holds `marker`: (written, aborted ones included; committed)."""
    counts = []
    for isolation in ("read_uncommitted", "read_committed"):
        consumer = KafkaConsumer(
            bootstrap_servers=settings.kafka_bootstrap,
            group_id=None,
            isolation_level=isolation,
            auto_offset_reset="earliest",
            consumer_timeout_ms=3000,
            max_partition_fetch_bytes=8 * 1024 * 1024,
        )
        try:
            topic = settings.topic_settlements
            consumer.assign(
                [TopicPartition(topic, p) for p in consumer.partitions_for_topic(topic)]
            )
            counts.append(sum(marker in m.value for m in consumer))
        finally:
            consumer.close()
    return counts[0], counts[1]


class Watermarks:
    """The end offsets of a topic, uncommitted records included: what has been written so far."""

    def __init__(self, settings: Settings, topic: str) -> None:
        self.consumer = KafkaConsumer(
            bootstrap_servers=settings.kafka_bootstrap,
            group_id=None,
            isolation_level="read_uncommitted",
        )
        self.tps = [TopicPartition(topic, p) for p in self.consumer.partitions_for_topic(topic)]

    def total(self) -> int:
        return sum(self.consumer.end_offsets(self.tps).values())

    def wait_above(self, mark: int, timeout: float = 30.0) -> float:
        """Until records were written past `mark`; returns the seconds waited."""
        started = time.monotonic()
        while self.total() <= mark:
            if time.monotonic() - started > timeout:
                raise TimeoutError(f"nothing written past {mark} within {timeout:.0f} s")
            time.sleep(0.002)
        return time.monotonic() - started

    def close(self) -> None:
        self.consumer.close()
