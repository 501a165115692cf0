"""The soak's own system, started and stopped as a whole: a three-node Kafka cluster (node 3's log
directory on a small tmpfs), a PostgreSQL, three settlement workers, two projectors and the API,
the wallet example and the simulator at a floor's rate (signed tables).

Nothing here is shared with another suite: the cluster is deploy/kafka/cluster.sh with
KAFKA_CLUSTER_BASE=.data/kafka-soak, brokers on 127.0.0.1:31192-31194 and controllers on
31195-31197 (SOAK_KAFKA_PORT moves all six); PostgreSQL is deploy/postgres/up.sh with
PG_BASE=.data/postgres-soak on 127.0.0.1:31632 (SOAK_PG_PORT). Both are wiped at the start and at
the end. Every port is below the kernel's ephemeral range (32768-60999), so no outgoing
connection holds one when a node (re)starts.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from confluent_kafka import admin as kafka_admin

from services.ports import free_port
from services.run import Child, spawn
from services.settings import Settings
from services.simulation.simulate import write_keys
from services.simulation.simulator import EPOCH, Config
from services.topics import plan
from tests.chaos.cluster import Cluster
from tests.chaos_cluster.nodes import Nodes, cluster_script
from tests.kafka import ROOT, create_topics, environment

OUT = ROOT / "test-output" / "soak"
PORT = int(os.environ.get("SOAK_KAFKA_PORT", "31192"))
PG_PORT = int(os.environ.get("SOAK_PG_PORT", "31632"))
KAFKA_BASE = ROOT / ".data" / "kafka-soak"
PG_BASE = ROOT / ".data" / "postgres-soak"
SMALL_NODE = 3
"""The node whose log directory is a tmpfs of DISK_MIB, to be filled by the full-disk fault."""
DISK_MIB = int(os.environ.get("SOAK_DISK_MIB", "512"))
RETENTION_MS = int(os.environ.get("SOAK_RETENTION_MS", str(4 * 60 * 1000)))
"""Retention of the inputs and outputs: short, so that deletion happens within the run."""
SEGMENT_MS = 60 * 1000
"""segment.ms of every topic but the state topic (whose segments the plan sets): a segment
closes every minute, so that retention deletes it and compaction cleans it within the run."""
TABLES = 50
PLAYERS = 800
SPEED = 6.0
"""Rounds a minute a table: 50 tables of 800 players bet some 5,000 bets a minute."""
FULL = Settings.model_fields["horizon"].default / SPEED * 60 + 120
"""Seconds into the run when the fold's state is full: its horizon of decided rounds a table
(200) reached at SPEED rounds a minute (33 minutes), and two minutes more."""
WORKERS = 3
"""Static group members, as the StatefulSet of deploy/k8s runs them: a worker killed -9 comes back
at once under its name, and its tasks with it (docs/BROKER-FAULTS.md, "The soak")."""
PROJECTORS = 2


def say(text: str) -> None:
    print(f"soak: {datetime.now(UTC):%H:%M:%S} {text}", file=sys.__stderr__, flush=True)


@dataclass(kw_only=True)
class Service:
    """A child process that can be killed -9 and started again with the same command."""

    name: str
    argv: list[str]
    env: dict[str, str]
    child: Child | None = None
    starts: int = 0

    def start(self) -> None:
        OUT.mkdir(parents=True, exist_ok=True)
        self.child = spawn(self.name, self.argv, OUT, self.env)
        self.starts += 1

    @property
    def pid(self) -> int | None:
        alive = self.child is not None and self.child.process.poll() is None
        return self.child.process.pid if alive and self.child is not None else None

    @property
    def log(self) -> Path:
        return OUT / f"{self.name}.log"

    def kill9(self) -> None:
        if self.child is not None and self.child.process.poll() is None:
            self.child.process.kill()
            self.child.process.wait()

    def signal(self, sig: signal.Signals) -> None:
        if self.pid is not None:
            os.kill(self.pid, sig)

    def stop(self, timeout: float = 30.0) -> None:
        if self.child is None or self.child.process.poll() is not None:
            return
        self.child.process.send_signal(signal.SIGTERM)
        try:
            self.child.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill9()


class Postgres:
    """The soak's own PostgreSQL (deploy/postgres/up.sh), restarted by pg_ctl."""

    def __init__(self) -> None:
        self.env = {**os.environ, "PG_PORT": str(PG_PORT), "PG_BASE": str(PG_BASE)}
        self.url = f"postgresql+psycopg://croupier@127.0.0.1:{PG_PORT}/croupier"
        found = sorted(Path("/usr/lib/postgresql").glob("*/bin"), key=lambda p: p.parent.name)
        self.bin = Path(os.environ.get("PG_BIN") or (found[-1] if found else "/usr/bin"))

    def _script(self, name: str, **extra: str) -> str:
        done = subprocess.run(
            ["bash", str(ROOT / "deploy" / "postgres" / name)],
            env={**self.env, **extra},
            capture_output=True,
            text=True,
            timeout=180,
        )
        if done.returncode != 0:
            raise RuntimeError(f"deploy/postgres/{name}: {done.stdout}\n{done.stderr}")
        return done.stdout

    def up(self) -> None:
        self._script("down.sh", PG_WIPE="1")
        self._script("up.sh")

    def down(self) -> None:
        self._script("down.sh", PG_WIPE="1")

    def pg_ctl(self, *args: str) -> None:
        data = PG_BASE.resolve() / "data"
        argv = [str(self.bin / "pg_ctl"), "-D", str(data), *args]
        if os.getuid() == 0:
            argv = ["runuser", "-u", "postgres", "--", *argv]
        subprocess.run(argv, cwd="/", check=True, capture_output=True, timeout=180)

    def restart(self) -> None:
        """pg_ctl restart -m fast: every connection is cut, the server back when it answers."""
        log = PG_BASE.resolve() / "server.log"
        self.pg_ctl("restart", "-m", "fast", "-w", "-t", "120", "-l", str(log))


class Kafka:
    """The soak's three nodes, node SMALL_NODE's log directory on a tmpfs of DISK_MIB."""

    def __init__(self) -> None:
        self.env = {
            **os.environ,
            "KAFKA_CLUSTER_BASE": str(KAFKA_BASE),
            "KAFKA_CLUSTER_PORT": str(PORT),
            "PYTHON": sys.executable,
        }
        self.env.pop("KAFKA_WIPE", None)
        self.small = KAFKA_BASE / f"node-{SMALL_NODE}" / "data"
        self.nodes = Nodes(
            bootstrap=",".join(f"127.0.0.1:{PORT + n}" for n in range(3)),
            env=self.env,
            script=cluster_script,
        )

    def ports(self, node: int) -> tuple[int, int]:
        """Node N's client and controller ports."""
        return PORT + node - 1, PORT + 3 + node - 1

    def pid(self, node: int) -> int | None:
        with contextlib.suppress(OSError, ValueError):
            pid = int((KAFKA_BASE / f"node-{node}" / "kafka.pid").read_text().strip())
            if b"kafka.Kafka" in Path(f"/proc/{pid}/cmdline").read_bytes():
                return pid
        return None

    def mounted(self) -> bool:
        return os.path.ismount(self.small)

    def unmount(self) -> None:
        if self.mounted():
            subprocess.run(["umount", "-l", str(self.small)], check=True, timeout=60)

    def up(self) -> None:
        cluster_script(self.env, "down")
        self.unmount()
        cluster_script(self.env, "down", "--wipe")
        self.small.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={DISK_MIB}m", "soak-kafka", str(self.small)],
            check=True,
            timeout=60,
        )
        for attempt in range(3):
            try:
                cluster_script(self.env, "up")
                break
            except RuntimeError as error:  # a port still held by an earlier client's socket
                if attempt == 2 or "Address already in use" not in str(error):
                    raise
                say("a node's port was in use; starting the cluster again")
                cluster_script(self.env, "down")
                time.sleep(5)
        self.nodes.warm()

    def down(self) -> None:
        """Every node stopped (a paused one woken first), the tmpfs gone, the data wiped."""
        for node in (1, 2, 3):
            pid = self.pid(node)
            if pid is not None:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGCONT)
        try:
            cluster_script(self.env, "down")
        finally:
            self.unmount()
            cluster_script(self.env, "down", "--wipe")


def soak_settings(bootstrap: str, keys: Path) -> Settings:
    return Settings(
        kafka_bootstrap=bootstrap,
        partitions=6,
        output_partitions=6,
        replication_factor=3,
        min_insync_replicas=2,
        session_timeout_ms=10000,
        retention_ms=RETENTION_MS,
        table_keys_file=str(keys),
        group_id="soak-settlement",
        transactional_prefix="soak-settlement",
    )


def short_segments(settings: Settings) -> list[str]:
    """segment.ms = SEGMENT_MS on every topic but the state topic (a key the plan does not set,
    so a worker's start leaves it), set incrementally: the planned keys stay."""
    names = [p.name for p in plan(settings) if p.name != settings.topic_state]
    admin = kafka_admin.AdminClient({"bootstrap.servers": settings.kafka_bootstrap})
    entry = kafka_admin.ConfigEntry(
        "segment.ms", str(SEGMENT_MS), incremental_operation=kafka_admin.AlterConfigOpType.SET
    )
    resources = [kafka_admin.ConfigResource("TOPIC", n, incremental_configs=[entry]) for n in names]
    for future in admin.incremental_alter_configs(resources).values():
        future.result(timeout=60)
    return names


@dataclass(kw_only=True)
class Stack:
    """Everything the soak runs, and how to reach it."""

    seed: int
    kafka: Kafka = field(default_factory=Kafka)
    postgres: Postgres = field(default_factory=Postgres)
    settings: Settings | None = None
    workers: Cluster | None = None
    projectors: list[Service] = field(default_factory=list)
    api: Service | None = None
    api_url: str = ""
    wallet: Service | None = None
    simulator: Service | None = None

    @property
    def keys(self) -> Path:
        return OUT / "table-keys.json"

    @property
    def wallet_db(self) -> Path:
        return OUT / "wallet.sqlite"

    def ready(self) -> Settings:
        assert self.settings is not None
        return self.settings

    def start(self) -> None:
        OUT.mkdir(parents=True, exist_ok=True)
        for old in [*OUT.glob("*.log"), *OUT.glob("*.sqlite*")]:
            old.unlink()
        say(f"starting the cluster on 127.0.0.1:{PORT}-{PORT + 5} ({DISK_MIB} MiB on node 3)")
        self.kafka.up()
        say(f"starting PostgreSQL on 127.0.0.1:{PG_PORT}")
        self.postgres.up()
        self._sign()
        self.settings = settings = soak_settings(self.kafka.nodes.bootstrap, self.keys)
        create_topics(settings)
        short_segments(settings)
        self.workers = Cluster(settings=settings, name="worker", logs=OUT)
        for n in range(WORKERS):
            self.workers.spawn(instance=f"{settings.group_id}-worker-{n}")
        self.workers.balanced(timeout=180)
        base = environment(settings)
        python = [sys.executable, "-m", "services.cli"]
        read = {**base, "DATABASE_URL": self.postgres.url, "CROUPIER_API_AUTH": "false"}
        for n in range(PROJECTORS):
            shard = {"CROUPIER_API_PROJECTOR_SHARDS": str(PROJECTORS)}
            shard["CROUPIER_API_PROJECTOR_SHARD"] = str(n)
            projector = Service(
                name=f"projector-{n}",
                argv=[*python, "projector", "--loglevel", "warning"],
                env={**read, **shard},
            )
            projector.start()
            self.projectors.append(projector)
        port = free_port()
        self.api_url = f"http://127.0.0.1:{port}"
        self.api = Service(
            name="api",
            argv=[*python, "api", "--serve-only", "--port", str(port), "--loglevel", "warning"],
            env=read,
        )
        self.api.start()
        self.wallet = Service(
            name="wallet",
            argv=[*python, "wallet", "--db", str(self.wallet_db), "--follow"],
            env=base,
        )
        self.wallet.start()
        self.simulator = Service(name="simulator", argv=self._simulate(), env=base)
        self.simulator.start()
        say(f"running: workers, {PROJECTORS} projectors, API {self.api_url}, wallet, simulator")

    def _simulate(self) -> list[str]:
        start = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
        return [
            *(sys.executable, "-m", "services.cli", "simulate"),
            f"--tables={TABLES}",
            f"--players={PLAYERS}",
            f"--speed={SPEED}",
            f"--seed={self.seed}",
            f"--start={start}",
            f"--sign={self.keys}",
        ]

    def _sign(self) -> None:
        """The tables' public keys (derived from the seed and the table), for the workers."""
        config = Config(
            tables=TABLES, players=PLAYERS, rounds=0, seed=self.seed, start=EPOCH, signed=True
        )
        write_keys(self.keys, config)

    def services(self) -> list[Service]:
        return [s for s in (*self.projectors, self.api, self.wallet, self.simulator) if s]

    def close(self) -> None:
        """Stop everything the soak started, in order, whatever state it is in."""
        for service in (self.simulator, self.wallet, self.api, *self.projectors):
            if service is not None:
                service.signal(signal.SIGCONT)
                service.stop()
        if self.workers is not None:
            self.workers.close()
        try:
            self.kafka.down()
        finally:
            self.postgres.down()
