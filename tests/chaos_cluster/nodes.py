"""The suite's three Kafka nodes: crash, stop and start them, and ask who leads what."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kafka.admin import KafkaAdminClient  # type: ignore[import-untyped]
from kafka.errors import KafkaError  # type: ignore[import-untyped]

from services.audit.reader import committed_lag
from services.settings import Settings
from tests.chaos.cluster import say
from tests.kafka import ROOT

NODES = (1, 2, 3)
INTERNAL = ["__consumer_offsets", "__transaction_state"]


def cluster_script(env: dict[str, str], *args: str) -> None:
    """deploy/kafka/cluster.sh with `env` (its KAFKA_CLUSTER_BASE and KAFKA_CLUSTER_PORT)."""
    done = subprocess.run(
        ["bash", str(ROOT / "deploy" / "kafka" / "cluster.sh"), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    if done.returncode != 0:
        raise RuntimeError(f"cluster.sh {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}")


@dataclass(kw_only=True)
class Nodes:
    """Node N is broker N (node.id N); `script` runs deploy/kafka/cluster.sh with `env`."""

    bootstrap: str
    env: dict[str, str]
    script: Callable[..., None]
    down: set[int] = field(default_factory=set)

    def kill9(self, n: int) -> None:
        """SIGKILL: no controlled shutdown, leadership moves when its session expires (4 s).

        The signal is sent from here, at once (a 10,000-bet transaction takes well under a
        second: starting a shell first could miss it); cluster.sh then waits until it is gone."""
        pidfile = Path(self.env["KAFKA_CLUSTER_BASE"]) / f"node-{n}" / "kafka.pid"
        with contextlib.suppress(OSError, ValueError):
            pid = int(pidfile.read_text().strip())
            if b"kafka.Kafka" in Path(f"/proc/{pid}/cmdline").read_bytes():  # still our node
                os.kill(pid, signal.SIGKILL)
        self.script(self.env, "kill9", str(n))
        self.down.add(n)
        say(f"node {n} killed -9")

    def stop(self, n: int) -> None:
        """SIGTERM: a controlled shutdown, its leaderships handed over first."""
        self.script(self.env, "stop", str(n))
        self.down.add(n)
        say(f"node {n} stopped")

    def start(self, n: int, wait: bool = True) -> None:
        """Start node N; with `wait`, until it answers (it needs a quorum: two nodes up)."""
        self.script({**self.env, "KAFKA_WAIT": "1" if wait else "0"}, "start", str(n))
        self.down.discard(n)
        say(f"node {n} started")

    def admin(self) -> KafkaAdminClient:
        return KafkaAdminClient(
            bootstrap_servers=self.bootstrap,
            client_id="chaos-cluster",
            request_timeout_ms=10000,
        )

    def ask(self, question: Callable[[KafkaAdminClient], Any], timeout: float = 60.0) -> Any:
        """An admin answer, retried while the cluster moves things around."""
        deadline = time.monotonic() + timeout
        while True:
            admin = None
            try:
                admin = self.admin()
                return question(admin)
            except (KafkaError, OSError, KeyError, IndexError) as error:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"the cluster did not answer: {error!r}") from error
                time.sleep(0.5)
            finally:
                if admin is not None:
                    admin.close()

    def leader(self, topic: str, partition: int) -> int:
        def find(admin: KafkaAdminClient) -> int:
            [meta] = admin.describe_topics([topic])
            [found] = [p for p in meta["partitions"] if p["partition_index"] == partition]
            leader = int(found["leader_id"])
            if leader < 0:
                raise KeyError(f"{topic}-{partition} has no leader")
            return leader

        found: int = self.ask(find)
        return found

    def transaction_coordinator(self, transactional_id: str) -> int:
        """The broker that coordinates a producer's transactions (DescribeTransactions, after
        FindCoordinator with key type TRANSACTION)."""

        def find(admin: KafkaAdminClient) -> int:
            [description] = admin.describe_transactions([transactional_id]).values()
            return int(description.coordinator_id)

        found: int = self.ask(find)
        return found

    def group_coordinator(self, group: str) -> int:
        """The broker that coordinates a consumer group (FindCoordinator, key type GROUP; a new
        client each time, so no cached answer)."""
        found: int = self.ask(lambda admin: admin._manager.run(admin._find_coordinator_id, group))
        return found

    def under_replicated(self) -> list[str]:
        """Partitions (internal ones included) with fewer in-sync replicas than replicas, or none
        leading; fails when the cluster does not answer."""

        def find(admin: KafkaAdminClient) -> list[str]:
            topics = admin.describe_topics() + admin.describe_topics(INTERNAL)
            return [
                f"{t['name']}-{p['partition_index']}"
                for t in topics
                for p in t["partitions"]
                if p["leader_id"] < 0 or len(p["isr_nodes"]) < len(p["replica_nodes"])
            ]

        found: list[str] = self.ask(find)
        return found

    def brokers(self) -> list[int]:
        """The brokers the controller counts as alive (registered and not fenced)."""

        def find(admin: KafkaAdminClient) -> list[int]:
            cluster = admin.describe_cluster()
            return sorted(b["broker_id"] for b in cluster["brokers"] if not b.get("is_fenced"))

        found: list[int] = self.ask(find)
        return found

    def whole(self, timeout: float = 240.0) -> float:
        """Every node up, registered and in every ISR again; returns the seconds it took."""
        started = time.monotonic()
        for n in sorted(self.down):
            self.start(n, wait=False)
        for n in NODES:
            self.start(n)
        problems: list[str] = ["not checked"]
        while time.monotonic() - started < timeout:
            try:
                alive = self.brokers()
                problems = [] if alive == list(NODES) else [f"brokers alive: {alive}"]
                problems += self.under_replicated()
            except TimeoutError as error:
                problems = [repr(error)]
            if not problems:
                return time.monotonic() - started
            time.sleep(1.0)
        raise TimeoutError(f"the cluster is not whole after {timeout:.0f} s: {problems[:5]}")

    def warm(self, timeout: float = 120.0) -> None:
        """Until the group coordinator answers (the offsets topic is created, three replicas,
        on first use) and the transaction log exists."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                committed_lag(Settings(kafka_bootstrap=self.bootstrap), "chaos-cluster-warm-up", [])
                break
            except KafkaError as error:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"no group coordinator at {self.bootstrap}") from error
                time.sleep(0.5)
        self.whole(timeout)
