"""Broker faults on a three-node cluster of the suite's own, only when asked for by path.

`pytest tests/chaos_cluster` (or `make chaos-cluster`) runs it; a plain `pytest` leaves it out.
The cluster is deploy/kafka/cluster.sh with KAFKA_CLUSTER_BASE=.data/kafka-chaos-cluster, brokers
on 127.0.0.1:29192-29194 and controllers on 29195-29197 (CHAOS_CLUSTER_PORT moves all six), wiped
and stopped at the end. CHAOS_CLUSTER_FULL=0 runs the reduced form (.ci/run).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.chaos.audit import FIGURES
from tests.chaos.cluster import LOGS, SEED, say
from tests.chaos_cluster.faults import FULL
from tests.chaos_cluster.nodes import Nodes, cluster_script
from tests.kafka import ROOT
from tests.opt_in import not_asked, tolerate_leaks

HERE = Path(__file__).resolve().parent


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    return not_asked(HERE, collection_path, config)


REDUCED_OUT = ("test_rolling_restart.py", "test_one_node_down_", "test_secured_cluster.py")
"""What the reduced form (CHAOS_CLUSTER_FULL=0) leaves out; it also kills one leader and one
coordinator instead of two each, and keeps two nodes down 20 s instead of 30. The secured
cluster (SASL/SCRAM over TLS, its own nodes) runs in the full form only."""


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not FULL:
        out = [i for i in items if any(part in i.nodeid for part in REDUCED_OUT)]
        if out:
            config.hook.pytest_deselected(items=out)
            items[:] = [i for i in items if i not in out]
    tolerate_leaks(HERE, items)


@pytest.fixture(scope="session")
def nodes() -> Iterator[Nodes]:
    first = int(os.environ.get("CHAOS_CLUSTER_PORT", "29192"))
    env = {
        **os.environ,
        "KAFKA_CLUSTER_BASE": str(ROOT / ".data" / "kafka-chaos-cluster"),
        "KAFKA_CLUSTER_PORT": str(first),
        "PYTHON": sys.executable,
    }
    env.pop("KAFKA_WIPE", None)
    say(f"starting the suite's own three-node cluster on 127.0.0.1:{first}-{first + 2}")
    for old in LOGS.glob("*.log"):  # the previous run's worker logs; figures.txt is kept
        old.unlink()
    started = time.monotonic()
    cluster_script(env, "down", "--wipe")
    try:
        cluster_script(env, "up")
        cluster = Nodes(
            bootstrap=",".join(f"127.0.0.1:{first + n}" for n in range(3)),
            env=env,
            script=cluster_script,
        )
        cluster.warm()
        say(f"cluster up in {time.monotonic() - started:.1f} s (seed {SEED})")
        yield cluster
    finally:  # also when the start failed: no node is left running
        cluster_script(env, "down", "--wipe")


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if FIGURES:
        terminalreporter.section(f"chaos-cluster figures (CHAOS_SEED={SEED})")
        for figures in FIGURES:
            terminalreporter.write_line(figures.line())
