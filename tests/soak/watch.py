"""What the soak measures while it runs, from threads of its own.

`Sampler`: every SAMPLE seconds each worker's and the read side's RSS, the state topic's bytes on
disk, PostgreSQL's table sizes and the settlement group's lag. `Tape`: every committed round
result, settlement, refund and adjustment, read as they are committed: settlement latency (a
round's result written to its settlements readable, read_committed) and the records a wallet
must have credited.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import msgspec
import psycopg
from kafka import KafkaConsumer, TopicPartition  # type: ignore[import-untyped]

from schemas.records import Settlement
from services.audit.reader import committed_lag
from services.audit.wallet import Credit, Wallet
from services.settings import Settings
from tests.soak.stack import KAFKA_BASE, Stack

SAMPLE = 15.0
"""Seconds between two samples."""


@dataclass(frozen=True, kw_only=True)
class Sample:
    t: float
    workers_rss: tuple[int | None, ...]
    readside_rss: int | None
    state_bytes: int
    tables_bytes: Mapping[str, int] | None
    lag: int | None
    small_used: int | None = None
    """Bytes used of the small node's tmpfs log directory."""


def rss(pid: int | None) -> int | None:
    """Resident bytes of a process (VmRSS), None when it is not running."""
    if pid is None:
        return None
    with contextlib.suppress(OSError, ValueError, IndexError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return None


def used(path: Path) -> int | None:
    """Bytes used of the file system `path` is on."""
    try:
        found = os.statvfs(path)
    except OSError:
        return None
    return (found.f_blocks - found.f_bfree) * found.f_frsize


def topic_bytes(topic: str, node: int = 1) -> int:
    """Bytes the partitions of a topic take in a node's log directory (one replica of each)."""
    data = KAFKA_BASE / f"node-{node}" / "data"
    total = 0
    for directory in data.glob(f"{topic}-*"):
        if directory.name.rsplit("-", 1)[-1].isdigit():
            for part in directory.iterdir():
                with contextlib.suppress(OSError):
                    total += part.stat().st_size if part.suffix == ".log" else 0
    return total


def table_sizes(url: str) -> dict[str, int] | None:
    """pg_total_relation_size of every table of the read side; None when it does not answer."""
    plain = url.replace("postgresql+psycopg://", "postgresql://")
    try:
        with psycopg.connect(plain, connect_timeout=5) as db:
            rows = db.execute(
                "SELECT relname, pg_total_relation_size(relid) FROM pg_stat_user_tables"
            ).fetchall()
    except psycopg.Error:
        return None
    return {str(name): int(size) for name, size in rows}


class Sampler:
    def __init__(self, stack: Stack, started: float) -> None:
        self.stack = stack
        self.started = started
        self.samples: list[Sample] = []
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._run, name="sampler", daemon=True)

    def start(self) -> Sampler:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.stopped.set()
        self.thread.join(60)

    def _run(self) -> None:
        while not self.stopped.wait(SAMPLE):
            with contextlib.suppress(Exception):  # a sample missed is no failure of the soak
                self.samples.append(self.sample())

    def sample(self) -> Sample:
        stack = self.stack
        settings = stack.ready()
        assert stack.workers is not None
        workers = tuple(rss(w.process.pid) if w.alive() else None for w in stack.workers.workers)
        read = [rss(s.pid) for s in (*stack.projectors, stack.api) if s is not None]
        try:
            lag: int | None = committed_lag(
                settings, settings.group_id, list(settings.inputs), wait=5.0
            )
        except Exception:
            lag = None
        return Sample(
            t=time.monotonic() - self.started,
            workers_rss=workers,
            readside_rss=sum(r for r in read if r is not None) if all(read) else None,
            state_bytes=topic_bytes(settings.topic_state),
            tables_bytes=table_sizes(stack.postgres.url),
            lag=lag,
            small_used=used(stack.kafka.small),
        )


_DECIDING = (b'"type":"round.result"',)
_CREDIT = msgspec.json.Decoder(Credit)


class _Keys(msgspec.Struct):
    table_id: str = ""
    round_id: str = ""


_KEYS = msgspec.json.Decoder(_Keys)


@dataclass(kw_only=True)
class Tape:
    """A reader of the committed results and credits, in a thread, from the topics' start."""

    settings: Settings
    started: float
    latencies: list[tuple[float, float]] = field(default_factory=list)
    credits: list[tuple[str, int, int, Credit]] = field(default_factory=list)
    positions: dict[tuple[str, int], int] = field(default_factory=dict)
    decided: dict[tuple[str, str], float] = field(default_factory=dict)
    waiting: dict[tuple[str, str], list[float]] = field(default_factory=dict)
    stopped: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def start(self) -> Tape:
        threading.Thread(target=self._run, name="tape", daemon=True).start()
        return self

    def _run(self) -> None:
        s = self.settings
        consumer = KafkaConsumer(
            bootstrap_servers=s.kafka_bootstrap,
            group_id=None,
            enable_auto_commit=False,
            isolation_level="read_committed",
            auto_offset_reset="earliest",
            max_partition_fetch_bytes=8 * 1024 * 1024,
        )
        topics = [s.topic_rounds, s.topic_settlements, s.topic_refunds, s.topic_adjustments]
        consumer.assign(
            [TopicPartition(t, p) for t in topics for p in consumer.partitions_for_topic(t)]
        )
        try:
            while not self.stopped.is_set():
                with contextlib.suppress(Exception):  # a broker going away: read on
                    batches = consumer.poll(timeout_ms=500)
                    now = time.time()
                    with self.lock:
                        for tp, messages in batches.items():
                            for m in messages:
                                self._take(tp, m.offset, m.value, m.timestamp / 1000, now)
                        for tp in consumer.assignment():  # past transaction markers too
                            self.positions[(tp.topic, tp.partition)] = consumer.position(tp)
        finally:
            consumer.close()

    def _take(self, tp: TopicPartition, offset: int, raw: bytes, at: float, now: float) -> None:
        """One message: a round's result is noted with its timestamp (the game's producer's
        clock, this machine's), a settlement is timed against its round's result on receipt."""
        s = self.settings
        if tp.topic == s.topic_rounds:
            if any(tag in raw for tag in _DECIDING):
                keys = _KEYS.decode(raw)
                key = (keys.table_id, keys.round_id)
                self.decided.setdefault(key, at)
                for seen in self.waiting.pop(key, []):
                    self._latency(seen, at)
            return
        credit = _CREDIT.decode(raw)
        self.credits.append((tp.topic, tp.partition, offset, credit))
        if tp.topic == s.topic_settlements and isinstance(credit, Settlement):
            key = (credit.table_id, credit.round_id)
            result = self.decided.get(key)
            if result is None:
                self.waiting.setdefault(key, []).append(now)
            else:
                self._latency(now, result)

    def _latency(self, seen: float, decided: float) -> None:
        """(seconds into the run of the round's result, seconds from it to its settlement read):
        by the result's time, so that a settlement held up by a fault counts where it began."""
        into = decided - (time.time() - time.monotonic()) - self.started
        self.latencies.append((into, seen - decided))

    def stop(self) -> None:
        self.stopped.set()

    def wallet_at(self, positions: Mapping[tuple[str, int], int], timeout: float = 120.0) -> Wallet:
        """The balances of every committed credit below these positions (a ledger's), once the
        tape has read that far."""
        deadline = time.monotonic() + timeout
        while True:
            with self.lock:
                behind = [tp for tp, end in positions.items() if self.positions.get(tp, 0) < end]
                if not behind:
                    wallet = Wallet()
                    wallet.apply_all(
                        c for t, p, o, c in self.credits if o < positions.get((t, p), 0)
                    )
                    return wallet
            if time.monotonic() > deadline:
                raise TimeoutError(f"the tape did not reach the wallet's positions: {behind[:5]}")
            time.sleep(0.5)
