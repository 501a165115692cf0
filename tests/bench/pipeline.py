"""What the Kafka benchmarks share: worker processes, preloaded input, committed throughput, and
the latency of a 10,000-bet round's settlement."""

from __future__ import annotations

import asyncio
import os
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

from kafka import KafkaConsumer, KafkaProducer, TopicPartition  # type: ignore[import-untyped]

from services.audit.reader import committed_lag
from services.settings import Settings
from services.simulation.streams import CLEAN, Profile, generate
from tests.kafka import ROOT, environment, table_of

BOOTSTRAP = os.environ.get("KAFKA_BOOTSTRAP", "127.0.0.1:9092")


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def producer(linger_ms: int = 20) -> KafkaProducer:
    return KafkaProducer(
        bootstrap_servers=BOOTSTRAP, acks="all", linger_ms=linger_ms, batch_size=512 * 1024
    )


def preload(s: Settings, bets: int, tables: int) -> int:
    """Publish clean rounds of 150-250 bets totalling about `bets` bets; returns the number of bets."""
    profile = Profile(**{**CLEAN.__dict__, "bets_per_round": (150, 250)})
    out = producer()
    published = 0
    seed = 0
    while published < bets:
        streams = generate(seed, tables=tables, rounds=2, profile=profile, first_round=seed * 2)
        for raw in streams.rounds:
            out.send(s.topic_rounds, value=raw, key=table_of(raw))
        for raw in streams.bets:
            out.send(s.topic_bets, value=raw, key=table_of(raw))
        published += len(streams.bets)
        seed += 1
        say(f"  published {published:,} bets")
    out.flush()
    out.close()
    return published


def start(
    args: list[str], name: str, logs: Path, env: dict[str, str] | None = None
) -> subprocess.Popen[bytes]:
    """A Python process of this repository, its output in `logs`/`name`.log."""
    logs.mkdir(parents=True, exist_ok=True)
    with open(logs / f"{name}.log", "wb") as log:
        return subprocess.Popen(
            [sys.executable, *args],
            cwd=ROOT,
            env=env or dict(os.environ),
            stdout=log,
            stderr=subprocess.STDOUT,
        )


def worker(
    s: Settings, name: str, logs: Path, loglevel: str = "warning", **env: str
) -> subprocess.Popen[bytes]:
    """One `croupier worker` with settings `s`, and extra environment variables."""
    args = ["-m", "services.cli", "worker", "--loglevel", loglevel]
    return start(args, name, logs, {**environment(s), "PYTHONUNBUFFERED": "1", **env})


def stop(processes: list[subprocess.Popen[bytes]]) -> None:
    for p in processes:
        p.terminate()
    for p in processes:
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()


def rate(
    group: str,
    topics: list[str],
    total: int,
    processes: list[subprocess.Popen[bytes]],
    logs: Path,
    on_first: Callable[[], None] | None = None,
) -> float:
    """Messages per second between the group's first commit and lag 0 (`on_first` called when
    the first commit is seen)."""
    first: tuple[float, int] | None = None
    deadline = time.monotonic() + 900
    while time.monotonic() < deadline:
        for p in processes:
            if p.poll() is not None:
                raise RuntimeError(f"a benchmark process exited ({p.args}); see {logs}")
        lag = committed_lag(Settings(kafka_bootstrap=BOOTSTRAP), group, topics)
        now = time.monotonic()
        done = total - lag
        if first is None and done > 0:
            first = (now, done)
            if on_first is not None:
                on_first()
        if lag == 0 and first is not None:
            elapsed = now - first[0]
            return (total - first[1]) / elapsed if elapsed > 0 else float("inf")
        time.sleep(0.1)
    raise TimeoutError(f"group {group} did not catch up within 15 minutes")


def settled_rate(s: Settings, bets: int, workers: int, logs: Path, name: str, **env: str) -> float:
    """Settled bets per second of `workers` croupier workers over preloaded input."""
    rounds = committed_total(s) - bets
    procs = [worker(s, f"{name}-{n}", logs, **env) for n in range(workers)]
    try:
        msgs = rate(s.group_id, list(s.inputs), bets + rounds, procs, logs)
    finally:
        stop(procs)
    return msgs * bets / (bets + rounds)


def committed_total(s: Settings) -> int:
    """Messages in both inputs now."""
    consumer = KafkaConsumer(bootstrap_servers=BOOTSTRAP, group_id=None)
    tps = [TopicPartition(t, p) for t in s.inputs for p in range(s.partitions)]
    total = sum(consumer.end_offsets(tps).values())
    consumer.close()
    return int(total)


def latency(
    s: Settings, rounds: int, workers: int, logs: Path, name: str = "latency-worker", **env: str
) -> tuple[list[float], list[float]]:
    """Seconds from publishing a 10,000-bet round's result until its settlements are readable
    with read_committed: (the first of them, all 10,000), one pair per round, sorted."""
    firsts: list[float] = []
    times = asyncio.run(_latency(s, rounds, workers, logs, name, firsts, env))
    return sorted(firsts), sorted(times)


async def _latency(
    s: Settings,
    rounds: int,
    workers: int,
    logs: Path,
    name: str,
    firsts: list[float],
    env: dict[str, str],
) -> list[float]:
    from aiokafka import AIOKafkaConsumer  # type: ignore[import-untyped]
    from aiokafka import TopicPartition as Part

    procs = [worker(s, f"{name}-{n}", logs, "info", **env) for n in range(workers)]
    out = producer(linger_ms=5)
    reader = AIOKafkaConsumer(
        bootstrap_servers=BOOTSTRAP,
        isolation_level="read_committed",
        fetch_max_wait_ms=20,
        max_partition_fetch_bytes=8 * 1024 * 1024,
        fetch_max_bytes=32 * 1024 * 1024,
    )
    await reader.start()
    parts = [Part(s.topic_settlements, p) for p in range(s.output_partitions)]
    reader.assign(parts)
    await reader.seek_to_end(*parts)
    times: list[float] = []
    try:
        for n in range(rounds):
            table = f"L{n % 3}"
            round_id = f"latency-{uuid.uuid4().hex[:8]}"
            head = f'"v":1,"table_id":"{table}","round_id":"{round_id}","at":"2026-11-29T12:00:00Z"'
            key = table.encode()
            opened = f'{{"type":"round.opened","event_id":"{round_id}-o",{head},"game":"sicbo"}}'
            out.send(s.topic_rounds, key=key, value=opened.encode())
            for seq in range(1, 10_001):
                out.send(
                    s.topic_bets,
                    key=key,
                    value=(
                        f'{{"type":"bet.placed","event_id":"{round_id}-{seq}",{head},'
                        f'"bet_id":"{round_id}-{seq}","player_id":"P{seq % 500}","seq":{seq},'
                        '"kind":"big","stake":100,"currency":"EUR"}'
                    ).encode(),
                )
            closed = f'{{"type":"round.betting_closed","event_id":"{round_id}-c",{head},"last_seq":10000}}'
            out.send(s.topic_rounds, key=key, value=closed.encode())
            out.flush()
            deadline = time.monotonic() + 300
            while (
                committed_lag(Settings(kafka_bootstrap=BOOTSTRAP), s.group_id, list(s.inputs))
                and time.monotonic() < deadline
            ):
                for p in procs:
                    if p.poll() is not None:
                        raise RuntimeError(f"a benchmark worker exited ({p.args}); see {logs}")
                await asyncio.sleep(0.1)
            await reader.getmany(timeout_ms=50)
            needle = f'"round_id":"{round_id}"'.encode()
            result = f'{{"type":"round.result","event_id":"{round_id}-r",{head},"dice":[1,2,{1 + n % 6}]}}'
            sent = time.monotonic()
            out.send(s.topic_rounds, key=key, value=result.encode())
            out.flush()
            seen = 0
            visible = 0.0
            while seen < 10_000 and time.monotonic() < sent + 120:
                batch = await reader.getmany(timeout_ms=20, max_records=20000)
                for records in batch.values():
                    seen += sum(1 for r in records if needle in r.value)
                if seen and not visible:
                    visible = time.monotonic() - sent
            firsts.append(visible)
            times.append(time.monotonic() - sent)
            say(
                f"  round {n + 1}/{rounds}: committed and readable after {visible * 1000:.0f} ms,"
                f" all {seen:,} settlements read after {times[-1] * 1000:.0f} ms"
            )
    finally:
        out.close()
        await reader.stop()
        stop(procs)
    return times


def percentiles(values: list[float]) -> str:
    """p50 and p99 of sorted seconds, in milliseconds."""
    return f"p50 {statistics.median(values) * 1000:6.0f} ms  p99 {p99(values) * 1000:6.0f} ms"


def p99(values: list[float]) -> float:
    return values[min(len(values) - 1, round(0.99 * (len(values) - 1)))]


def variant(s: Settings, tag: str) -> Settings:
    """The same inputs with outputs, state, group and transactional ids of their own: another run
    over the same preloaded input."""
    outputs = ("settlements", "refunds", "table_stats", "rejected", "accepted", "state")
    update: dict[str, object] = {
        f"topic_{role}": f"{getattr(s, f'topic_{role}')}-{tag}" for role in outputs
    }
    update["group_id"] = f"{s.group_id}-{tag}"
    update["transactional_prefix"] = f"{s.transactional_prefix}-{tag}"
    return s.model_copy(update=update)
