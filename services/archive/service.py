"""`croupier archive DIR`: the Kafka shell that copies `accepted` and `rejected` into the archive.

It reads both topics with read_committed from the archive's own positions (never a consumer
group's: the positions are committed with the data, docs/DESIGN.md, "The archive") and commits
a batch every `interval` seconds, or sooner when it has read `BATCH` records or `BATCH_BYTES`.
With `once` it stops when it has reached the ends the topics had when it started.
"""

from __future__ import annotations

import signal
import sys
import time
from types import FrameType
from typing import Final, TextIO

from kafka import KafkaConsumer, TopicPartition  # type: ignore[import-untyped]

from services.archive.store import Storage
from services.archive.writer import Writer
from services.audit.reader import Message, message
from services.security import clients
from services.security.denied import partitions as readable
from services.security.denied import reraise
from services.settings import Settings

BATCH: Final = 50_000
"""Records committed at most at once."""
BATCH_BYTES: Final = 64 * 1024 * 1024
"""Bytes of values read before a commit, at most (plus the last poll's)."""


def archive(
    settings: Settings, storage: Storage, *, once: bool, interval: float, out: TextIO
) -> int:
    """Archive until stopped (SIGTERM, SIGINT) or, with `once`, until caught up; 0 when done."""
    stopping: list[int] = []

    def stop(signum: int, _: FrameType | None) -> None:
        stopping.append(signum)

    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, stop)
    writer = Writer(storage)
    consumer = KafkaConsumer(
        **clients.kafka_python(settings),
        group_id=None,
        enable_auto_commit=False,
        isolation_level="read_committed",
        auto_offset_reset="earliest",
        max_partition_fetch_bytes=8 * 1024 * 1024,
        fetch_max_bytes=64 * 1024 * 1024,
    )
    try:
        roles = {"accepted": settings.topic_accepted, "rejected": settings.topic_rejected}
        tps = {
            TopicPartition(topic, p): role
            for role, topic in roles.items()
            for p in readable(consumer, settings, topic, doing="archive it")
        }
        consumer.assign(list(tps))
        starts = consumer.beginning_offsets(list(tps))
        for tp, role in tps.items():
            at = writer.position(role, tp.partition)
            if at is None:
                consumer.seek_to_beginning(tp)
            else:
                consumer.seek(tp, max(at, starts[tp]))
            if starts[tp] > (at or 0):
                print(
                    f"archive: {role}[{tp.partition}]: offsets {at or 0} to {starts[tp] - 1} were "
                    "deleted before they were archived (retention): the archive lacks them",
                    file=out,
                    flush=True,
                )
        goal = consumer.end_offsets(list(tps))
        total = 0
        while not stopping:
            batch: list[tuple[str, Message]] = []
            size = 0
            deadline = time.monotonic() + interval
            while (
                not stopping
                and time.monotonic() < deadline
                and len(batch) < BATCH
                and size < BATCH_BYTES
            ):
                polled = consumer.poll(timeout_ms=200, max_records=BATCH - len(batch))
                for tp, records in polled.items():
                    role = tps[tp]
                    batch.extend((role, message(tp.topic, tp.partition, r)) for r in records)
                    size += sum(len(r.value or b"") for r in records)
                if not polled and once and _reached(consumer, goal):
                    break
            read = {(role, tp.partition): consumer.position(tp) for tp, role in tps.items()}
            ends = consumer.end_offsets(list(tps))
            caught = {
                (role, tp.partition): read[role, tp.partition] >= ends[tp]
                for tp, role in tps.items()
            }
            written = writer.commit(batch, caught, read)
            total += written
            if written:
                print(
                    f"archived {written} records (sealed through {writer.state.sealed})",
                    file=out,
                    flush=True,
                )
            if once and _reached(consumer, goal):
                break
    finally:
        consumer.close()
    state = writer.state
    print(
        f"archive: {total} records this run; sealed through {state.sealed or 'no day yet'}, "
        f"last manifest SHA-256 {state.previous or '-'}; open days: "
        f"{', '.join(sorted({e.day for e in state.files})) or 'none'}",
        file=out,
        flush=True,
    )
    return 0


def _reached(consumer: KafkaConsumer, goal: dict[TopicPartition, int]) -> bool:
    return all(consumer.position(tp) >= end for tp, end in goal.items())


def main(where: str, *, once: bool, interval: float, bootstrap: str | None) -> int:
    from services.archive.store import open_storage

    try:
        storage = open_storage(where)
    except ValueError as error:
        print(f"croupier archive: {error}", file=sys.stderr)
        return 2
    settings = Settings() if bootstrap is None else Settings(kafka_bootstrap=bootstrap)
    try:
        return archive(settings, storage, once=once, interval=interval, out=sys.stderr)
    except LookupError as error:
        print(
            f"croupier archive: {error}; check --bootstrap and CROUPIER_TOPIC_ACCEPTED and "
            "_REJECTED, or run `croupier topics`",
            file=sys.stderr,
        )
        return 2
    except OSError:
        raise  # the archive's directory: the command's own handling names the file
    except Exception as error:  # kafka-python raises its own errors for an unreachable cluster
        reraise(error, settings, doing="archive", resource="topics", operation="Describe and Read")
        print(
            f"croupier archive: cannot read from Kafka at {settings.kafka_bootstrap} ({error!r}); "
            "start it (`make kafka-up`) or pass --bootstrap / KAFKA_BOOTSTRAP",
            file=sys.stderr,
        )
        return 1
