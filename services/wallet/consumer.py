"""The wallet's Kafka side: committed settlements, refunds and adjustments, batch by batch, into the
ledger.

The ledger holds the positions, committed with the credits in one database transaction: they are
the truth. Alone, the wallet assigns itself every partition. With a consumer group (`group`, on a
secured cluster a name the wallet role may use: `wallet-*`), the group shares the partitions among
the wallet's processes; each seeks the partitions it is given to the ledger's positions, and
commits the same positions to the group after each batch, so that the group's lag is what is left
to credit (those commits are advice: a record read twice is skipped by its id).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

import msgspec
from kafka import (  # type: ignore[import-untyped]
    ConsumerRebalanceListener,
    KafkaConsumer,
    TopicPartition,
)
from kafka.errors import CommitFailedError, KafkaError  # type: ignore[import-untyped]
from kafka.structs import OffsetAndMetadata  # type: ignore[import-untyped]

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
    group: str | None = None,
) -> Progress:
    """Apply every committed record after the stored positions (or all), until the end or `stop`;
    with `group`, of the partitions the consumer group gives this process."""
    check(settings)
    consumer = KafkaConsumer(
        **clients.kafka_python(settings),
        group_id=group,
        enable_auto_commit=False,
        isolation_level="read_committed",
        auto_offset_reset="earliest",
        client_id="croupier-wallet",
    )
    progress = Progress()
    stop = stop or threading.Event()
    seek = _Seek(consumer, ledger, topics, from_beginning)
    try:
        for topic in topics:
            found = readable(consumer, settings, topic, doing="credit what croupier decided")
            if group is None:
                seek.tps += [TopicPartition(topic, p) for p in found]
        if group is None:
            consumer.assign(seek.tps)
            seek.on_partitions_assigned(seek.tps)
        else:
            consumer.subscribe(topics, listener=seek)
        shown = time.monotonic()
        while not stop.is_set():
            if not follow and seek.caught_up():
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
                if group is not None:
                    _advise(consumer, positions)
            if report is not None and time.monotonic() - shown >= 5.0:
                shown = time.monotonic()
                report(progress)
    finally:
        consumer.close()
    return progress


class _Seek(ConsumerRebalanceListener):  # type: ignore[misc]
    """Positions the consumer on the ledger's positions of the partitions it is given."""

    def __init__(
        self, consumer: KafkaConsumer, ledger: Ledger, topics: list[str], from_beginning: bool
    ) -> None:
        self.consumer = consumer
        self.ledger = ledger
        self.topics = topics
        self.from_beginning = from_beginning
        self.tps: list[TopicPartition] = []
        self.ends: dict[TopicPartition, int] | None = None

    def on_partitions_revoked(self, revoked: list[TopicPartition]) -> None:
        pass  # the ledger already holds every position it applied

    def on_partitions_assigned(self, assigned: list[TopicPartition]) -> None:
        """Called from the client's network thread, which may not block on the brokers: seeks
        are local, the partitions' ends are read later (`caught_up`), and the ledger's positions
        through a connection of its own (SQLite's are not shared between threads)."""
        self.tps = list(assigned)
        stored = {}
        if not self.from_beginning:
            reader = Ledger(self.ledger.path)
            try:
                stored = reader.positions(self.topics)
            finally:
                reader.close()
        for tp in self.tps:
            offset = stored.get((tp.topic, tp.partition))
            if offset is None:
                self.consumer.seek_to_beginning(tp)
            else:
                self.consumer.seek(tp, offset)
        self.ends = None

    def caught_up(self) -> bool:
        """Whether every partition this process has is read to its end as of its assignment
        (False before a group gave it any)."""
        tps = self.tps
        if not tps:
            return False
        if self.ends is None:
            self.ends = self.consumer.end_offsets(tps)
        ends = self.ends
        return all(tp in ends and self.consumer.position(tp) >= ends[tp] for tp in tps)


def _advise(consumer: KafkaConsumer, positions: dict[tuple[str, int], int]) -> None:
    """Commit the ledger's new positions to the group (for its lag); a commit refused during a
    rebalance changes nothing, the ledger is the truth."""
    offsets = {
        TopicPartition(t, p): OffsetAndMetadata(o, "", -1) for (t, p), o in positions.items()
    }
    with contextlib.suppress(CommitFailedError, KafkaError):
        consumer.commit(offsets)
