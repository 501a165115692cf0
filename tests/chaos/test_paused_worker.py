"""A worker paused (SIGSTOP) past its session while settling is fenced when it resumes."""

from __future__ import annotations

import signal
import time

from services.partitioner import partition_of
from tests.chaos.audit import check
from tests.chaos.cluster import (
    SEED,
    Feeder,
    Watermarks,
    cluster,
    copies,
    say,
    seeded,
    wait_committed,
)
from tests.chaos.conftest import Broker
from tests.chaos.streams import BIG, big_round, tables
from tests.kafka import create_topics, isolated_settings

SESSION_MS = 6000


def test_a_worker_paused_past_its_session_is_fenced_and_writes_nothing_that_survives(
    broker: Broker,
) -> None:
    seeded("pause")
    started = time.monotonic()
    settings = isolated_settings(broker.bootstrap, partitions=4, session_timeout_ms=SESSION_MS)
    create_topics(settings)
    background = tables(SEED + 2, tables=12, rounds=15)
    head, result = big_round(SEED + 2, "PAUSE")
    partition = partition_of(b"PAUSE", settings.partitions)
    with cluster(settings, "pause") as workers:
        workers.keep(2)
        feeder = Feeder(settings, background, rate=len(background) / 40).start()
        feeder.publish(head)
        wait_committed(settings, partition)
        victim = workers.owner(partition)
        marks = Watermarks(settings, settings.topic_settlements)
        with feeder.quiet():
            before = marks.total()
            feeder.publish(result)
            marks.wait_above(before)
            victim.signal(signal.SIGSTOP)
            victim.paused = True
            paused = time.monotonic()
        marks.close()
        say(f"pause: {victim.name} stopped while settling its {BIG}-bet round")
        heir = workers.owner(partition, timeout=90)
        taken = time.monotonic() - paused
        say(f"pause: {heir.name} took partition {partition} over after {taken:.1f} s")
        time.sleep(max(0.0, SESSION_MS / 1000 + 4 - (time.monotonic() - paused)))
        victim.signal(signal.SIGCONT)
        victim.paused = False
        stopped = time.monotonic() - paused
        say(f"pause: {victim.name} resumed after {stopped:.1f} s")
        feeder.finish()
        written, committed = copies(settings, b'"round_id":"PAUSE-')
        assert committed == BIG
        fenced = "fenced" in victim.log.read_text(errors="replace")
        note = (
            f"paused {stopped:.0f} s, taken over after {taken:.1f} s, "
            f"{written - committed} of its writes aborted, fenced on resume: {fenced}"
        )
        check("paused worker", workers, feeder.sent, started, note=note)
