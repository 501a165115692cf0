"""Reading a task's state back from its partition of the state topic (the Kafka shell of state)."""

from __future__ import annotations

import time
from dataclasses import dataclass

from aiokafka import AIOKafkaConsumer, TopicPartition  # type: ignore[import-untyped]

from services.security import clients
from services.settings import Settings


@dataclass(kw_only=True)
class Log:
    """The live entries of one task's state partition, and what reading them cost."""

    entries: dict[bytes, bytes]
    records: int = 0
    size: int = 0
    seconds: float = 0.0


async def read(settings: Settings, partitions: list[int]) -> dict[int, Log]:
    """Every committed record of these partitions of the state topic, to their end.

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
    )
    await reader.start()
    try:
        reader.assign(tps)
        await reader.seek_to_beginning(*tps)
        ends = await reader.end_offsets(tps)
        open_ = {tp for tp in tps if await reader.position(tp) < ends[tp]}
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
    finally:
        await reader.stop()
    for log in logs.values():
        log.seconds = time.monotonic() - started
    return logs
