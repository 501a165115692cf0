"""Reading a task's state back from its partition of the state topic, for the aiokafka engine.

A restore reads a partition from the start of the task's last whole rewrite (the `snapshot` offset
its latest position record names), not from offset 0: what lies before it is superseded or
forgotten, and right after a long catch-up the compacted topic still holds much of that (its
cleaner has not run over the newest segments, and it keeps tombstones a while). The position record
is the last record of every transaction, so it is found by reading back from the end.
"""

from __future__ import annotations

import contextlib
import time
from typing import Any

from aiokafka import AIOKafkaConsumer, TopicPartition  # type: ignore[import-untyped]

from services.security import clients
from services.settings import Settings
from services.settlement import state
from services.settlement.changelog import Log, miscounted, start_of
from services.settlement.state import StateError

WINDOW = 512
"""Offsets read back from the end at first to find the latest position record (then 8 times more,
as long as none is found: an aborted transaction after it holds records too)."""
FETCH_WAIT_MS = 10
"""How long the broker may hold a fetch that finds nothing new (the default, 500 ms, was paid once
or twice per restore: the reader's first fetch, made before it is positioned, waits at the end of
the partitions, and a seek waits for it to come back)."""


async def read(settings: Settings, partitions: list[int]) -> dict[int, Log]:
    """Every committed record of these partitions of the state topic, from the start of each
    task's last rewrite to the end.

    Called after the tasks' producers started, which completed or aborted any transaction their
    previous owners left open, so the end read (the last stable offset) is final.
    """
    started = time.monotonic()
    tps = [TopicPartition(settings.topic_state, p) for p in partitions]
    logs = {p: Log(entries={}) for p in partitions}
    reader = AIOKafkaConsumer(
        **clients.aiokafka(settings),
        group_id=None,
        enable_auto_commit=False,
        isolation_level="read_committed",
        max_partition_fetch_bytes=16 * 1024 * 1024,
        fetch_max_bytes=64 * 1024 * 1024,
        fetch_max_wait_ms=FETCH_WAIT_MS,
    )
    await reader.start()
    try:
        reader.assign(tps)
        firsts = await reader.beginning_offsets(tps)
        ends = await reader.end_offsets(tps)
        positions = await _positions(reader, firsts, ends)
        starts = {tp: start_of(positions.get(tp), firsts[tp], ends[tp]) for tp in tps}
        await _entries(reader, tps, starts, ends, logs)
        again = [tp for tp in tps if miscounted(logs[tp.partition], positions.get(tp), firsts[tp])]
        for tp in again:
            log = logs[tp.partition]
            held = len(log.entries) - (state.TASK_KEY in log.entries)
            note = (
                f"read from offset {log.start} it held {held} entries where its position counts "
                f"{positions[tp].entries}; read whole"
            )
            logs[tp.partition] = Log(entries={}, note=note)
            starts[tp] = firsts[tp]
        await _entries(reader, again, starts, ends, logs)
    finally:
        await reader.stop()
    for log in logs.values():
        log.seconds = time.monotonic() - started
    return logs


async def _entries(
    reader: AIOKafkaConsumer,
    tps: list[TopicPartition],
    starts: dict[TopicPartition, int],
    ends: dict[TopicPartition, int],
    logs: dict[int, Log],
) -> None:
    """The live entries of these partitions from `starts` to `ends`, into their logs."""
    for tp in tps:
        logs[tp.partition].start, logs[tp.partition].end = starts[tp], ends[tp]
        reader.seek(tp, starts[tp])
    open_ = {tp for tp in tps if starts[tp] < ends[tp]}
    while open_:
        batch = await reader.getmany(*open_, timeout_ms=500, max_records=50000)
        for tp, records in batch.items():
            log = logs[tp.partition]
            entries = log.entries
            for record in records:
                if record.offset >= ends[tp]:
                    break
                log.records += 1
                key = record.key or b""  # no key: no state record, so restoring refuses it
                if record.value is None:
                    entries.pop(key, None)
                else:
                    entries[key] = record.value
                    log.size += len(record.value)
        for tp in list(open_):
            if await reader.position(tp) >= ends[tp]:
                open_.discard(tp)


async def _positions(
    reader: AIOKafkaConsumer, firsts: dict[TopicPartition, int], ends: dict[TopicPartition, int]
) -> dict[TopicPartition, state.Position]:
    """The latest position record of each partition that has a readable one (the others are read
    whole, and the restore says what is wrong with them)."""
    found: dict[TopicPartition, bytes] = {}

    def note(tp: TopicPartition, record: Any) -> None:
        if record.key == state.TASK_KEY and record.value is not None:
            found[tp] = record.value  # the last one read is the newest

    window = WINDOW
    froms = {tp: firsts[tp] for tp in ends}
    looking = {tp for tp in ends if ends[tp] > firsts[tp]}
    while looking:
        for tp in looking:
            froms[tp] = max(firsts[tp], ends[tp] - window)
            reader.seek(tp, froms[tp])
        await _scan(reader, {tp: ends[tp] for tp in looking}, note)
        looking = {tp for tp in looking if tp not in found and froms[tp] > firsts[tp]}
        window *= 8
    positions: dict[TopicPartition, state.Position] = {}
    for tp, raw in found.items():
        with contextlib.suppress(StateError):
            positions[tp] = state.read_position(raw)
    return positions


async def _scan(reader: AIOKafkaConsumer, ends: dict[TopicPartition, int], each: Any) -> None:
    """Hand every committed record below `ends` of these partitions, from where the reader is
    positioned, to `each(tp, record)`."""
    open_ = {tp for tp in ends if await reader.position(tp) < ends[tp]}
    while open_:
        batch = await reader.getmany(*open_, timeout_ms=500, max_records=50000)
        for tp, records in batch.items():
            end = ends[tp]
            for record in records:
                if record.offset >= end:
                    break
                each(tp, record)
        for tp in list(open_):
            if await reader.position(tp) >= ends[tp]:
                open_.discard(tp)
