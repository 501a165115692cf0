"""The projector killed with SIGKILL again and again during ingest, and PostgreSQL restarted under
it: afterwards the database equals the offline replay, nothing missing or doubled."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from services.history.queries import Reads
from services.history.store import connect
from services.simulation.streams import Profile, Streams, generate
from tests.committed import commit
from tests.database import fresh_url, server_url
from tests.e2e.support import offline, read_side, wait_read_up
from tests.kafka import (
    OUTPUT,
    ROOT,
    create_topics,
    environment,
    isolated_settings,
    publish,
    workers,
)
from tests.readside.test_projection_equals_replay import expected_decisions

KILLS = 6


@contextmanager
def projector_process(env: dict[str, str], name: str) -> Iterator[subprocess.Popen[bytes]]:
    with open(OUTPUT / f"{name}.log", "ab") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "services.cli", "projector", "--loglevel", "info"],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        yield process
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def restart_local_postgres(while_down: Callable[[], None]) -> None:
    """Stop the local PostgreSQL, run `while_down`, start it again."""
    subprocess.run(["bash", str(ROOT / "deploy/postgres/down.sh")], check=True)
    while_down()
    subprocess.run(["bash", str(ROOT / "deploy/postgres/up.sh")], check=True)


def until_in(log: Path, text: str, limit_s: float = 60) -> None:
    """Wait until the log holds the text (at most `limit_s`)."""
    deadline = time.monotonic() + limit_s
    while text not in log.read_text() and time.monotonic() < deadline:
        time.sleep(0.2)


def test_kill_9_of_the_projector_and_a_postgres_restart_lose_and_double_nothing(
    kafka: str, tmp_path: Path
) -> None:
    if f"127.0.0.1:{os.environ.get('PG_PORT', '15432')}" not in server_url():
        pytest.fail("this test restarts the local PostgreSQL of `make db-up`; unset DATABASE_URL")
    settings = isolated_settings(kafka, partitions=4)
    create_topics(settings)
    profile = Profile(bets_per_round=(10, 60))
    streams = generate(41, tables=12, rounds=40, profile=profile)
    later = generate(42, tables=12, rounds=8, profile=profile, first_round=100)
    both = Streams(rounds=streams.rounds + later.rounds, bets=streams.bets + later.bets)
    committed = commit(both)
    off = offline(both)
    OUTPUT.mkdir(exist_ok=True)
    with fresh_url("postgresql", tmp_path) as database:
        env = environment(settings)
        env["DATABASE_URL"] = database
        kills = 0
        publish(settings, streams, seed=41)
        with workers(settings, 2):
            while kills < KILLS:
                with projector_process(env, f"{settings.group_id}-projector-{kills}") as p:
                    time.sleep(1.5 + 0.4 * kills)
                    assert p.poll() is None, "the projector exited on its own; see its log"
                    p.send_signal(signal.SIGKILL)
                    p.wait()
                    kills += 1
            last = OUTPUT / f"{settings.group_id}-projector-last.log"
            with projector_process(env, f"{settings.group_id}-projector-last") as p:
                until_in(last, "projecting")

                def work_while_down() -> None:  # the projector meets the outage with work
                    publish(settings, later, seed=42)
                    until_in(last, "database unavailable")

                restart_local_postgres(work_while_down)
                with read_side(settings, "health", database=database, serve_only=True) as url:
                    wait_read_up(url, timeout=300)
                assert p.poll() is None, "the projector did not survive the database restart"
        engine = connect(database)
        try:
            reads = Reads(engine)
            expected_decisions(reads, off)
            counters = reads.counters()
            # Journals are cut where the workers' batches ended: counted, not compared.
            assert counters.get(("croupier_read_events_total", '{topic="accepted"}'), 0) > 0
            rejected = counters.get(("croupier_read_events_total", '{topic="rejected"}'), 0)
            assert rejected == committed.count("rejected")
            counted = [
                (labels, n)
                for (name, labels), n in counters.items()
                if name == "croupier_read_decisions_total"
            ]
            decisions = sum(n for labels, n in counted if 'kind="adjustment"' not in labels)
            adjusted = sum(n for labels, n in counted if 'kind="adjustment"' in labels)
            assert decisions == len(off.decisions)
            assert adjusted == sum(len(made) for made in off.adjustments.values()) > 0
            assert reads.pending() == 0
        finally:
            engine.dispose()
    assert "database unavailable" in last.read_text()  # the restart happened under it
