"""Test support for the archive: what workers would write to `accepted` and `rejected` for a
generated stream, as Kafka messages with offsets and timestamps, and an archive written of them."""

from __future__ import annotations

import random
from pathlib import Path

from schemas.codec import encode
from schemas.journal import records as journal_records
from schemas.records import Record, Rejected, TableStats
from services.archive.store import Directory, Storage
from services.archive.writer import Writer
from services.audit.reader import Message
from services.partitioner import partition_of
from services.settlement.fold import Fold
from services.simulation.streams import Profile, Streams, generate, interleave
from tests.kafka import table_of

DAY_MS = 86_400_000
START_MS = 1_764_417_600_000
"""2025-11-29T12:00:00Z."""
WITH_CORRECTIONS = Profile(correct=0.3, void=0.15)


def stream(seed: int = 7, tables: int = 6, rounds: int = 12) -> list[tuple[str, bytes]]:
    """A generated stream (corrections, voids, rejections, redeliveries), one allowed order."""
    streams: Streams = generate(seed, tables=tables, rounds=rounds, profile=WITH_CORRECTIONS)
    return interleave(streams, random.Random(seed))


def topics(
    messages: list[tuple[str, bytes]], partitions: int = 3, step_ms: int = 600_000
) -> dict[str, list[Message]]:
    """`accepted` and `rejected` as one worker per partition writes them (a transaction per
    input), timestamps `step_ms` apart from START_MS: a journal of the inputs its fold accepted and
    the decisions, and each rejection."""
    folds = [Fold(journal=True) for _ in range(partitions)]
    out: dict[str, list[Message]] = {"accepted": [], "rejected": []}
    offsets = {("accepted", p): 0 for p in range(partitions)}
    offsets.update({("rejected", p): 0 for p in range(partitions)})
    for n, (topic, raw) in enumerate(messages):
        key = table_of(raw)
        p = 0 if key is None else partition_of(key, partitions)
        fold = folds[p]
        decided: list[Record] = fold.feed(topic, raw)
        assert fold.journal is not None
        inputs = [r for _, r in fold.journal.accepted]
        fold.journal.clear()
        at = START_MS + n * step_ms
        decisions = [encode(r) for r in decided if not isinstance(r, Rejected | TableStats)]
        for value in journal_records(inputs, decisions):
            out["accepted"].append(_message("accepted", p, offsets, value, at, None))
        for r in decided:
            if isinstance(r, Rejected):
                out["rejected"].append(_message("rejected", p, offsets, encode(r), at, key))
    return out


def _message(
    role: str,
    p: int,
    offsets: dict[tuple[str, int], int],
    value: bytes,
    at: int,
    key: bytes | None,
) -> Message:
    offset = offsets[role, p]
    offsets[role, p] = offset + 2  # every other offset: a transaction's marker between
    return Message(topic=role, partition=p, offset=offset, key=key, value=value, timestamp=at)


def archive(
    root: Path | Storage, found: dict[str, list[Message]], partitions: int = 3, batches: int = 5
) -> Writer:
    """The messages archived under `root` (a directory, or any storage) in `batches` commits, each
    partition caught up at the last one."""
    writer = Writer(Directory(root) if isinstance(root, Path) else root)
    every = sorted(
        ((role, m) for role, ms in found.items() for m in ms), key=lambda rm: rm[1].timestamp
    )
    size = -(-len(every) // batches)
    for start in range(0, len(every), size):
        last = start + size >= len(every)
        caught = {(role, p): last for role in ("accepted", "rejected") for p in range(partitions)}
        writer.commit(every[start : start + size], caught)
    return writer
