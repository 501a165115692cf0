"""Reading tasks' state back from their partitions of the state topic (the store's Kafka side).

A restore reads a partition from where the oldest part of the task's state was last written whole
(the `snapshot` offset its latest position record names), not from offset 0: what lies before it
is superseded or forgotten, and right after a long catch-up the compacted topic still holds much
of that (its cleaner has not run over the newest segments, and it keeps tombstones a while). The
position record is the last record of every transaction, so it is found by reading back from the
end.

Reads are read_committed and end at the last stable offset, measured once the task's committed
input offsets are stable (`restore`): a transaction its previous owner left open is not read.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from confluent_kafka import Consumer, KafkaError, KafkaException, Message, TopicPartition

from services import reading
from services.settings import Settings
from services.settlement import state
from services.settlement.state import StateError
from services.settlement.store import Found

WINDOW = 512
"""Offsets read back from the end at first to find the latest position record (then 8 times more,
as long as none is found: an aborted transaction after it holds records too)."""


@dataclass(kw_only=True)
class Log:
    """The live entries of one task's state partition from `start` to `end`, and what reading
    them cost."""

    entries: dict[bytes, bytes]
    offsets: dict[bytes, int] = field(default_factory=dict)
    """The offset each live entry was read at (where the store ages its parts from)."""
    records: int = 0
    size: int = 0
    seconds: float = 0.0
    start: int = 0
    end: int = 0
    note: str | None = None
    """Why the partition was read whole after all, if it was."""

    def found(self) -> Found:
        """What the store keeps of this read."""
        return Found(
            start=self.start,
            end=self.end,
            records=self.records,
            size=self.size,
            live_records=len(self.entries),
            live_size=sum(len(k) + len(v) for k, v in self.entries.items()),
        )


def reader(settings: Settings, **extra: Any) -> Consumer:
    """A read_committed consumer of assigned partitions that reads each to its end."""
    return reading.reader(
        settings,
        "restore",
        **{
            "enable.partition.eof": True,
            "fetch.wait.max.ms": 10,
            "fetch.max.bytes": 64 * 1024 * 1024,
            "max.partition.fetch.bytes": 16 * 1024 * 1024,
            **extra,
        },
    )


def read(settings: Settings, partitions: list[int]) -> dict[int, Log]:
    """Every committed record of these partitions of the state topic, from each task's restore
    offset (its position's snapshot) to the end."""
    started = time.monotonic()
    tps = [TopicPartition(settings.topic_state, p) for p in partitions]
    logs = {p: Log(entries={}) for p in partitions}
    consumer = reader(settings)
    try:
        bounds = {tp.partition: reading.bounds_of(consumer, tp) for tp in tps}
        firsts = {p: first for p, (first, _) in bounds.items()}
        ends = {p: end for p, (_, end) in bounds.items()}
        positions = _positions(consumer, settings.topic_state, firsts, ends)
        starts = {p: start_of(positions.get(p), firsts[p], ends[p]) for p in partitions}
        _entries(consumer, settings.topic_state, starts, ends, logs)
        again = [p for p in partitions if miscounted(logs[p], positions.get(p), firsts[p])]
        for p in again:
            log = logs[p]
            held = len(log.entries) - (state.TASK_KEY in log.entries)
            note = (
                f"read from offset {log.start} it held {held} entries where its position counts "
                f"{positions[p].entries}; read whole"
            )
            logs[p] = Log(entries={}, note=note)
            starts[p] = firsts[p]
        _entries(consumer, settings.topic_state, {p: starts[p] for p in again}, ends, logs)
    finally:
        consumer.close()
    for log in logs.values():
        log.seconds = time.monotonic() - started
    return logs


def open_transactions(settings: Settings, ends: dict[int, int]) -> list[int]:
    """The state partitions whose records go on past `ends` (their last stable offset, as read):
    a transaction is open on them."""
    consumer = reader(settings, **{"isolation.level": "read_uncommitted"})
    try:
        return [
            p
            for p, end in ends.items()
            if reading.bounds_of(consumer, TopicPartition(settings.topic_state, p))[1] > end
        ]
    finally:
        consumer.close()


def scan(
    consumer: Consumer,
    starts: dict[tuple[str, int], int],
    ends: dict[tuple[str, int], int],
    each: Callable[[str, int, list[Message]], None],
) -> None:
    """Hand every committed record of these topic partitions from `starts` below `ends` to
    `each(topic, partition, records)`, in offset order per partition, a run of one partition's
    records at a time (as librdkafka hands them over: the checks are made once a run)."""
    open_ = {tp for tp in starts if starts[tp] < ends[tp]}
    if not open_:
        return
    consumer.assign([TopicPartition(t, p, starts[(t, p)]) for t, p in sorted(open_)])
    try:
        while open_:
            for tp, run in _runs(reading.take(consumer, 50_000, 0.5)):
                if tp not in open_:
                    continue
                end = ends[tp]
                if not run or _offset(run[-1]) >= end - 1:  # at the partition's end, or past it
                    open_.discard(tp)
                    while run and _offset(run[-1]) >= end:
                        run.pop()
                if run:
                    each(tp[0], tp[1], run)
    finally:
        consumer.unassign()


def _offset(message: Message) -> int:
    return message.offset() or 0


def _runs(messages: list[Message]) -> Iterator[tuple[tuple[str, int], list[Message]]]:
    """The records in order as runs of one partition each; a partition's end (librdkafka's
    _PARTITION_EOF) as an empty run of it; any other error raised."""
    run: list[Message] = []
    topic, partition = "", -1
    for message in messages:
        error = message.error()
        if error is not None:
            if error.code() != KafkaError._PARTITION_EOF:
                raise KafkaException(error)
            if run:
                yield (topic, partition), run
                run = []
            yield (message.topic() or "", message.partition() or 0), []
            partition = -1
            continue
        if message.partition() != partition or message.topic() != topic:
            if run:
                yield (topic, partition), run
                run = []
            topic, partition = message.topic() or "", message.partition() or 0
        run.append(message)
    if run:
        yield (topic, partition), run


def start_of(position: state.Position | None, first: int, end: int) -> int:
    """Where to read a partition from: its position's snapshot, within what it holds."""
    return min(max(first, 0 if position is None else position.snapshot), end)


def miscounted(log: Log, position: state.Position | None, first: int) -> bool:
    """A read from the snapshot offset that did not find the entries its position counts (the topic
    was copied at other offsets, say): the partition is read whole instead."""
    if position is None or position.entries < 0 or log.start <= first:
        return False
    return len(log.entries) - (state.TASK_KEY in log.entries) != position.entries


def _entries(
    consumer: Consumer,
    topic: str,
    starts: dict[int, int],
    ends: dict[int, int],
    logs: dict[int, Log],
) -> None:
    """The live entries of these partitions from `starts` to `ends`, into their logs."""
    for p, start in starts.items():
        logs[p].start, logs[p].end = start, ends[p]

    def keep(_: str, p: int, run: list[Message]) -> None:
        log = logs[p]
        log.records += len(run)
        entries, offsets = log.entries, log.offsets
        for message in run:
            key = message.key() or b""  # no key: no state record, so restoring refuses it
            value = message.value()
            if value is None:
                entries.pop(key, None)
                offsets.pop(key, None)
            else:
                entries[key] = value
                offsets[key] = message.offset() or 0
                log.size += len(value)

    scan(consumer, _of(topic, starts), _of(topic, ends), keep)


def _positions(
    consumer: Consumer, topic: str, firsts: dict[int, int], ends: dict[int, int]
) -> dict[int, state.Position]:
    """The latest position record of each partition that has a readable one (the others are read
    whole, and the restore says what is wrong with them)."""
    found: dict[int, bytes] = {}

    def note(_: str, p: int, run: list[Message]) -> None:
        for message in run:
            value = message.value()
            if message.key() == state.TASK_KEY and value is not None:
                found[p] = value  # the last one read is the newest

    window = WINDOW
    froms = dict(firsts)
    looking = {p for p in ends if ends[p] > firsts[p]}
    while looking:
        for p in looking:
            froms[p] = max(firsts[p], ends[p] - window)
        scan(consumer, {(topic, p): froms[p] for p in looking}, _of(topic, ends), note)
        looking = {p for p in looking if p not in found and froms[p] > firsts[p]}
        window *= 8
    positions: dict[int, state.Position] = {}
    for p, raw in found.items():
        with contextlib.suppress(StateError):
            positions[p] = state.read_position(raw)
    return positions


def _of(topic: str, offsets: dict[int, int]) -> dict[tuple[str, int], int]:
    return {(topic, p): offset for p, offset in offsets.items()}
