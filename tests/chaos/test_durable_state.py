"""Faults of the durable state: a kill while a large state change is being written, the start of
the inputs deleted before a takeover, a corrupt state record."""

from __future__ import annotations

import re
import threading
import time

from kafka import TopicPartition  # type: ignore[import-untyped]
from kafka.admin import KafkaAdminClient  # type: ignore[import-untyped]

from services.partitioner import partition_of
from services.settings import Settings
from services.settlement.state import table_key
from tests.chaos.audit import check, check_sent
from tests.chaos.cluster import (
    SEED,
    Cluster,
    Feeder,
    Watermarks,
    Worker,
    cluster,
    copies,
    say,
    wait_caught_up,
    wait_committed,
)
from tests.chaos.conftest import Broker
from tests.chaos.streams import BIG, Tagged, big_round, tables
from tests.chaos.tampering import OpenTransaction, corrupt, ends, state_writes, truncate
from tests.kafka import create_topics, isolated_settings, table_of
from tests.worker_log import Restore, restored

TABLES = 12
BLOCKED_METRIC = re.compile(rb"^croupier_tasks_blocked(\{[^}]*\})? 1(\.0)?$", re.MULTILINE)


def ready(worker: Worker, timeout: float = 60.0) -> Restore:
    """What the worker's log says it restored, once it has a task ready."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = restored(worker.log)
        if found.lines:
            return found
        time.sleep(0.2)
    raise TimeoutError(f"{worker.name} has no task ready after {timeout:.0f} s; see {worker.log}")


def kill_in_state_write(
    workers: Cluster, feeder: Feeder, messages: Tagged, partition: int
) -> tuple[Worker, float]:
    """Publish a 10,000-bet round's bets (background traffic held) and kill -9 the owner of
    `partition` while a transaction has written part of their state and not committed it; start
    its replacement."""
    owner = workers.owner(partition)
    watch = OpenTransaction(workers.settings, workers.settings.topic_state, partition)
    try:
        with feeder.quiet():
            sending = threading.Thread(target=feeder.publish, args=(messages,))
            sending.start()
            delay = watch.wait(least=2)
            replacement = workers.replace(owner)
            sending.join()
    finally:
        watch.close()
    return replacement, delay


def kill_in_settlement(
    workers: Cluster, feeder: Feeder, messages: Tagged, partition: int
) -> tuple[Worker, float]:
    """Publish a round's result and kill -9 its owner at the first settlement written (as the
    worker kill fault aims): the round's state change is in the same open transaction."""
    owner = workers.owner(partition)
    marks = Watermarks(workers.settings, workers.settings.topic_settlements)
    try:
        with feeder.quiet():
            before = marks.total()
            feeder.publish(messages)
            delay = marks.wait_above(before)
            replacement = workers.replace(owner)
    finally:
        marks.close()
    return replacement, delay


def test_a_worker_killed_while_its_state_change_is_written_restores_exactly(
    broker: Broker,
) -> None:
    """Once while the 10,000 bets of a round are written to the state, once while the round's
    settlement is; the replacement (same instance id) restores the committed state."""
    started = time.monotonic()
    settings = isolated_settings(broker.bootstrap, partitions=4, session_timeout_ms=6000)
    create_topics(settings)
    background = tables(SEED + 1, tables=TABLES, rounds=12)
    table = "BIGSTATE"
    partition = partition_of(table.encode(), settings.partitions)
    head, result = big_round(SEED + 7, table)
    with cluster(settings, "state-kill") as workers:
        workers.spawn("a")
        workers.spawn("b")
        feeder = Feeder(settings, background, rate=len(background) / 30).start()
        workers.balanced()
        before = state_writes(settings, partition)
        replacement, at_bets = kill_in_state_write(workers, feeder, head, partition)
        wait_committed(settings, partition)
        after_bets = ready(replacement)
        middle = state_writes(settings, partition)
        replacement, at_result = kill_in_settlement(workers, feeder, result, partition)
        after_result = ready(replacement)
        feeder.finish()
        wait_caught_up(settings)
        written, committed = copies(settings, f'"round_id":"{table}-'.encode())
        assert committed == BIG
        aborted_state = (middle[0] - before[0]) - (middle[1] - before[1])
        say(
            f"state kill: killed {at_bets:.2f} s into the bets' state write ({aborted_state} state "
            f"records aborted), {at_result:.2f} s into the settlement ({written - committed} "
            "settlements aborted)"
        )
        for restore in (after_bets, after_result):
            assert restore.records, f"the replacement restored no state records: {restore}"
        note = (
            f"kills at the bets' state write ({aborted_state} state records aborted) and at the "
            f"settlement ({written - committed} settlements aborted); replacements restored "
            f"{after_bets.records} and {after_result.records} state records, refolded "
            f"{after_bets.events} and {after_result.events} events"
        )
        check("state write kill", workers, feeder.sent, started, note=note)


def test_a_takeover_after_the_inputs_start_was_deleted_restores_or_blocks_a_corrupt_task(
    broker: Broker,
) -> None:
    """Everything settled, every input record deleted, one task's state corrupted, every worker
    killed -9 and replaced: the other tasks restore and settle the rounds open across the cut and
    new ones exactly as the fold of the whole streams does; the corrupt task refuses to run."""
    started = time.monotonic()
    settings = isolated_settings(broker.bootstrap, partitions=4, session_timeout_ms=6000)
    create_topics(settings)
    names = [f"T{t:03d}".encode() for t in range(TABLES)]
    blocked = partition_of(names[0], settings.partitions)
    cut_tables = {name for name in names if partition_of(name, settings.partitions) == blocked}
    history = tables(SEED + 2, tables=TABLES, rounds=10)
    across = tables(SEED + 3, tables=TABLES, rounds=1, first_round=10)
    heads = [(kind, raw) for kind, raw in across if b'"round.result"' not in raw]
    results = [(kind, raw) for kind, raw in across if b'"round.result"' in raw]
    redelivered = history[:: max(1, len(history) // 40)]
    later = tables(SEED + 4, tables=TABLES, rounds=4, first_round=11)
    with cluster(settings, "truncated") as workers:
        workers.spawn("a")
        workers.spawn("b")
        feeder = Feeder(settings, [], rate=1.0).start()
        feeder.publish(history + heads)
        wait_caught_up(settings)
        workers.balanced()
        cut = truncate(settings)
        corrupt(settings, blocked, table_key(names[0].decode()))
        say(f"truncated: inputs deleted up to {sum(cut.values())} records; task {blocked} corrupt")
        replacements = [workers.replace(w) for w in list(workers.workers)]
        after = [m for m in redelivered + results + later if table_of(m[1]) is not None]
        feeder.publish(after)
        feeder.finish()
        for p in range(settings.partitions):
            if p != blocked:
                wait_committed(settings, p)
        restores = [restored(w.log) for w in replacements]
        answers = {w.name: (w.page("/health"), w.page("/metrics")) for w in workers.workers}
        refusing = [
            (health, metrics)
            for health, metrics in answers.values()
            if health is not None and health[0] == 503
        ]
        assert len(refusing) == 1, f"no single worker refuses task {blocked}: {answers}"
        (status, body), metrics = refusing[0]
        assert b'"blocked"' in body and f'"{blocked}"'.encode() in body, body
        assert metrics is not None and BLOCKED_METRIC.search(metrics[1]), metrics
        errors = [line for line in _lines(replacements) if "[ERROR]" in line]
        assert any(f"task {blocked} blocked" in line for line in errors), errors
        restored_records = sum(r.records or 0 for r in restores)
        assert restored_records > 0 and sum(r.events for r in restores) == 0, restores
        expected = history + heads + [m for m in after if table_of(m[1]) not in cut_tables]
        check_sent(
            "inputs deleted",
            workers,
            expected,
            started,
            note=f"{restored_records} state records restored, task {blocked} blocked ({status})",
        )
        _assert_nothing_committed(settings, blocked, cut)


def test_a_corrupt_state_record_with_the_whole_input_refolds_and_rewrites_the_state(
    broker: Broker,
) -> None:
    """The replacement refolds the corrupt task from offset 0 and rewrites its state; the next
    takeover restores from that state again, refolding nothing."""
    started = time.monotonic()
    settings = isolated_settings(broker.bootstrap, partitions=4, session_timeout_ms=6000)
    create_topics(settings)
    table = "T001"
    partition = partition_of(table.encode(), settings.partitions)
    with cluster(settings, "corrupt") as workers:
        workers.spawn("a")
        workers.spawn("b")
        feeder = Feeder(settings, [], rate=1.0).start()
        feeder.publish(tables(SEED + 5, tables=TABLES, rounds=10))
        wait_caught_up(settings)
        workers.balanced()
        input_events = sum(ends(settings, [partition]).values())
        corrupt(settings, partition, table_key(table))
        cut = time.time()
        workers.replace(workers.owner(partition))
        feeder.publish(tables(SEED + 6, tables=TABLES, rounds=3, first_round=10))
        wait_caught_up(settings)
        refold = restored(workers.owner(partition).log, since=cut)
        assert refold.events >= input_events, f"task {partition} not refolded: {refold}"
        cut = time.time()
        workers.replace(workers.owner(partition))
        feeder.publish(tables(SEED + 8, tables=TABLES, rounds=3, first_round=13))
        wait_caught_up(settings)
        again = restored(workers.owner(partition).log, since=cut)
        assert again.records and again.events == 0, f"not restored from the state: {again}"
        feeder.finish()
        note = (
            f"refolded {refold.events} events, then restored {again.records} state records "
            f"refolding {again.events}"
        )
        check("corrupt state", workers, feeder.sent, started, note=note)


def _lines(workers: list[Worker]) -> list[str]:
    return [line for w in workers for line in w.log.read_text(errors="replace").splitlines()]


def _assert_nothing_committed(
    settings: Settings, partition: int, cut: dict[TopicPartition, int]
) -> None:
    """The blocked task's input offsets stay where the cut left them."""
    admin = KafkaAdminClient(bootstrap_servers=settings.kafka_bootstrap)
    try:
        committed = admin.list_group_offsets({settings.group_id: None})[settings.group_id]
    finally:
        admin.close()
    for tp, offset in cut.items():
        if tp.partition == partition:
            assert committed[tp].offset == offset, f"{tp} committed past the cut: {committed[tp]}"
