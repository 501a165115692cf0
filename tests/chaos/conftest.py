"""The fault suite runs on a broker of its own (so it may kill it), only when asked for by path.

`pytest tests/chaos` (or `make chaos`) runs it; a plain `pytest` leaves it out, since it takes
minutes. The broker is deploy/kafka/up.sh with KAFKA_BASE=.data/kafka-chaos on ports 19092/19093
(CHAOS_KAFKA_PORT, CHAOS_CONTROLLER_PORT), wiped and stopped at the end; with CHAOS_KEEP=1 it is
left running with its topics, so that a failure can be examined (`croupier verify --json`).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from kafka.errors import KafkaError  # type: ignore[import-untyped]

from services.audit.reader import committed_lag
from services.settings import Settings
from tests.chaos.audit import FIGURES
from tests.chaos.cluster import LOGS, SEED, say
from tests.kafka import ROOT
from tests.opt_in import not_asked, tolerate_leaks

HERE = Path(__file__).resolve().parent


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    return not_asked(HERE, collection_path, config)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    tolerate_leaks(HERE, items)


@dataclass(frozen=True, kw_only=True)
class Broker:
    """The suite's own broker: its address and how to crash and restart it."""

    bootstrap: str
    env: dict[str, str]

    def kill9(self) -> None:
        _script("kill9.sh", self.env)

    def up(self) -> None:
        _script("up.sh", self.env)

    def pause(self) -> None:
        """SIGSTOP: the broker (and its controller, one process) stops answering, sockets open."""
        os.kill(self._pid(), signal.SIGSTOP)

    def resume(self) -> None:
        os.kill(self._pid(), signal.SIGCONT)

    def _pid(self) -> int:
        return int((Path(self.env["KAFKA_BASE"]) / "kafka.pid").read_text().strip())


def _script(name: str, env: dict[str, str], *args: str) -> None:
    done = subprocess.run(
        ["bash", str(ROOT / "deploy" / "kafka" / name), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    if done.returncode != 0:
        raise RuntimeError(f"deploy/kafka/{name} failed:\n{done.stdout}\n{done.stderr}")


@pytest.fixture(scope="session")
def broker() -> Iterator[Broker]:
    port = os.environ.get("CHAOS_KAFKA_PORT", "19092")
    env = {
        **os.environ,
        "KAFKA_BASE": str(ROOT / ".data" / "kafka-chaos"),
        "KAFKA_PORT": port,
        "KAFKA_CONTROLLER_PORT": os.environ.get("CHAOS_CONTROLLER_PORT", "19093"),
        "PYTHON": sys.executable,
    }
    say(f"starting the suite's own broker on 127.0.0.1:{port} (seed {SEED})")
    for old in LOGS.glob("*.log"):  # the previous run's worker logs; figures.txt is kept
        old.unlink()
    _script("down.sh", env, "--wipe")
    _script("up.sh", env)
    bootstrap = f"127.0.0.1:{port}"
    _warm(bootstrap)
    try:
        yield Broker(bootstrap=bootstrap, env=env)
    finally:
        if os.environ.get("CHAOS_KEEP") != "1":
            _script("down.sh", env, "--wipe")


def _warm(bootstrap: str, timeout: float = 60.0) -> None:
    """Until a new cluster has a group coordinator (its offsets topic is created on first use)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            committed_lag(Settings(kafka_bootstrap=bootstrap), "chaos-warm-up", [])
            return
        except KafkaError as error:
            if time.monotonic() > deadline:
                raise RuntimeError(f"the broker at {bootstrap} has no group coordinator") from error
            time.sleep(0.5)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if FIGURES:
        terminalreporter.section(f"chaos figures (CHAOS_SEED={SEED})")
        for figures in FIGURES:
            terminalreporter.write_line(figures.line())
