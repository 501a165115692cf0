"""The wallet's Kafka side: committed settlements, refunds and adjustments, batch by batch, into the
ledger."""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

import msgspec
from kafka import KafkaConsumer, TopicPartition  # type: ignore[import-untyped]

from schemas.codec import payload
from services.security import clients
from services.security.denied import partitions as readable
from services.security.login import check
from services.settings import Settings
from services.wallet.credit import Credit, credit_of
from services.wallet.ledger import Ledger


@dataclass(kw_only=True)
class Progress:
    """What a run read and did."""

    read: int = 0
    new: int = 0
    repeated: int = 0
    unreadable: Counter[str] = field(default_factory=Counter)


def consume(
    ledger: Ledger,
    settings: Settings,
    topics: list[str],
    *,
    follow: bool = False,
    from_beginning: bool = False,
    stop: threading.Event | None = None,
    report: Callable[[Progress], None] | None = None,
    max_records: int = 5000,
) -> Progress:
    """Apply every committed record after the stored positions (or all), until the end or `stop`."""
    check(settings)
    consumer = KafkaConsumer(
        **clients.kafka_python(settings),
        group_id=None,
        enable_auto_commit=False,
        isolation_level="read_committed",
        auto_offset_reset="earliest",
        client_id="croupier-wallet",
    )
    progress = Progress()
    stop = stop or threading.Event()
    try:
        tps = []
        for topic in topics:
            found = readable(consumer, settings, topic, doing="credit what croupier decided")
            tps += [TopicPartition(topic, p) for p in found]
        consumer.assign(tps)
        stored = {} if from_beginning else ledger.positions(topics)
        for tp in tps:
            offset = stored.get((tp.topic, tp.partition))
            if offset is None:
                consumer.seek_to_beginning(tp)
            else:
                consumer.seek(tp, offset)
        ends = consumer.end_offsets(tps)
        shown = time.monotonic()
        while not stop.is_set():
            if not follow and all(consumer.position(tp) >= ends[tp] for tp in tps):
                break
            batch = consumer.poll(timeout_ms=500, max_records=max_records)
            credits: list[Credit] = []
            for tp, records in batch.items():
                for r in records:
                    progress.read += 1
                    try:
                        credits.append(credit_of(payload(r.value)))
                    except msgspec.DecodeError:
                        progress.unreadable[tp.topic] += 1
            positions = {(tp.topic, tp.partition): consumer.position(tp) for tp in batch}
            if credits or positions:
                applied = ledger.apply(credits, positions)
                progress.new += applied.new
                progress.repeated += applied.repeated
            if report is not None and time.monotonic() - shown >= 5.0:
                shown = time.monotonic()
                report(progress)
    finally:
        consumer.close()
    return progress
