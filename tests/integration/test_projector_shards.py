"""Two `croupier projector` processes sharing the partitions of one PostgreSQL database, one of
them killed with SIGKILL during ingest and started again: the database equals the offline
replay, and the figures both add to (players, counters) are exact."""

from __future__ import annotations

import signal
import time
from pathlib import Path

from services.history.queries import Reads
from services.history.store import connect
from services.simulation.streams import Profile, generate
from tests.database import fresh_url
from tests.e2e.support import offline, read_side, wait_read_up
from tests.integration.test_projector_faults import projector_process
from tests.kafka import create_topics, environment, isolated_settings, publish, workers
from tests.readside.test_projection_equals_replay import expected_decisions


def test_two_projector_shards_one_killed_midway_project_everything_once(
    kafka: str, tmp_path: Path
) -> None:
    settings = isolated_settings(kafka, partitions=4)
    create_topics(settings)
    streams = generate(43, tables=10, rounds=30, profile=Profile(bets_per_round=(10, 60)))
    off = offline(streams)
    with fresh_url("postgresql", tmp_path) as database:
        env = environment(settings) | {
            "DATABASE_URL": database,
            "CROUPIER_API_PROJECTOR_SHARDS": "2",
        }
        first = env | {"CROUPIER_API_PROJECTOR_SHARD": "0"}
        second = env | {"CROUPIER_API_PROJECTOR_SHARD": "1"}
        name = f"{settings.group_id}-shard"
        publish(settings, streams, seed=43)
        with (
            workers(settings, 2),
            projector_process(first, f"{name}-0") as zero,
        ):
            with projector_process(second, f"{name}-1") as one:
                time.sleep(3)
                assert one.poll() is None, "shard 1 exited on its own; see its log"
                one.send_signal(signal.SIGKILL)
                one.wait()
            with (
                projector_process(second, f"{name}-1-again") as again,
                read_side(settings, "health", database=database, serve_only=True) as url,
            ):
                wait_read_up(url, timeout=300)
                assert zero.poll() is None and again.poll() is None
        engine = connect(database)
        try:
            reads = Reads(engine)
            expected_decisions(reads, off)
            counters = reads.counters()
            decided = sum(
                n
                for (metric, labels), n in counters.items()
                if metric == "croupier_read_decisions_total" and 'kind="adjustment"' not in labels
            )
            assert decided == len(off.decisions)
            assert counters[("croupier_read_players", "")] == len(off.players)
            assert reads.pending() == 0
        finally:
            engine.dispose()
