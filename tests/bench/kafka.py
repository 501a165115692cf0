"""`make bench-kafka`: the pipeline on the local broker next to two pass-through baselines.

1. Throughput, same input for all three, preloaded: settled bets per second through croupier's
   workers, against a faust agent and a plain aiokafka loop that only copy `bets` unchanged.
   Each rate is measured between the group's first committed offset and its last (lag 0), so
   process start-up is left out of every side alike.
2. Latency: rounds of 10,000 bets; time from publishing `round.result` until the round's last
   settlement is readable with read_committed (p50, p99).
"""

from __future__ import annotations

import asyncio
import io
import os
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path

from kafka import KafkaConsumer, KafkaProducer, TopicPartition  # type: ignore[import-untyped]
from kafka.admin import KafkaAdminClient, NewTopic  # type: ignore[import-untyped]

from services.audit.reader import committed_lag
from services.settings import Settings
from services.simulation.streams import CLEAN, Profile, generate
from services.topics import ensure
from tests.kafka import environment, isolated_settings, table_of

ROOT = Path(__file__).resolve().parents[2]
BOOTSTRAP = os.environ.get("KAFKA_BOOTSTRAP", "127.0.0.1:9092")
BETS = int(os.environ.get("CROUPIER_BENCH_KAFKA_BETS", "100000"))
LATENCY_ROUNDS = int(os.environ.get("CROUPIER_BENCH_LATENCY_ROUNDS", "10"))
PARTITIONS = int(os.environ.get("CROUPIER_BENCH_PARTITIONS", "4"))
WORKERS = int(os.environ.get("CROUPIER_BENCH_WORKERS", "1"))
LOGS = ROOT / "test-output" / "bench-kafka"


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def settings() -> Settings:
    return isolated_settings(BOOTSTRAP, partitions=PARTITIONS)


def preload(s: Settings) -> int:
    """Publish clean rounds totalling about BETS bets; returns the number of bets."""
    profile = Profile(**{**CLEAN.__dict__, "bets_per_round": (150, 250)})
    producer = KafkaProducer(
        bootstrap_servers=BOOTSTRAP, acks="all", linger_ms=20, batch_size=512 * 1024
    )
    bets = 0
    seed = 0
    while bets < BETS:
        streams = generate(
            seed, tables=PARTITIONS * 4, rounds=2, profile=profile, first_round=seed * 2
        )
        for raw in streams.rounds:
            producer.send(s.topic_rounds, value=raw, key=table_of(raw))
        for raw in streams.bets:
            producer.send(s.topic_bets, value=raw, key=table_of(raw))
        bets += len(streams.bets)
        seed += 1
        say(f"  published {bets:,} bets")
    producer.flush()
    producer.close()
    return bets


def rate(
    group: str, topics: list[str], total: int, processes: list[subprocess.Popen[bytes]]
) -> float:
    """Messages per second between the group's first commit and lag 0."""
    first: tuple[float, int] | None = None
    deadline = time.monotonic() + 900
    while time.monotonic() < deadline:
        for p in processes:
            if p.poll() is not None:
                raise RuntimeError(f"a benchmark process exited ({p.args}); see {LOGS}")
        lag = committed_lag(BOOTSTRAP, group, topics)
        now = time.monotonic()
        done = total - lag
        if first is None and done > 0:
            first = (now, done)
        if lag == 0 and first is not None:
            elapsed = now - first[0]
            return (total - first[1]) / elapsed if elapsed > 0 else float("inf")
        time.sleep(0.1)
    raise TimeoutError(f"group {group} did not catch up within 15 minutes")


def start(args: list[str], name: str, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    LOGS.mkdir(parents=True, exist_ok=True)
    with open(LOGS / f"{name}.log", "wb") as log:
        return subprocess.Popen(
            [sys.executable, *args],
            cwd=ROOT,
            env=env or dict(os.environ),
            stdout=log,
            stderr=subprocess.STDOUT,
        )


def stop(processes: list[subprocess.Popen[bytes]]) -> None:
    for p in processes:
        p.terminate()
    for p in processes:
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()


def copy_topic(s: Settings, name: str) -> str:
    admin = KafkaAdminClient(bootstrap_servers=BOOTSTRAP)
    topic = f"{s.topic_bets}-{name}"
    admin.create_topics([NewTopic(name=topic, num_partitions=PARTITIONS, replication_factor=1)])
    admin.close()
    return topic


def throughput(s: Settings, bets: int, rounds: int) -> dict[str, float]:
    results: dict[str, float] = {}
    say("croupier workers ...")
    procs = [
        start(
            ["-m", "services.cli", "worker", "--loglevel", "warning"], f"worker-{n}", environment(s)
        )
        for n in range(WORKERS)
    ]
    try:
        msgs = rate(s.group_id, list(s.inputs), bets + rounds, procs)
        results["croupier"] = msgs * bets / (bets + rounds)
    finally:
        stop(procs)
    for mode in ("faust", "aiokafka"):
        say(f"{mode} pass-through ...")
        target = copy_topic(s, mode)
        group = f"{s.group_id}-{mode}"
        procs = [start(["-m", "tests.bench.passthrough", mode, s.topic_bets, target, group], mode)]
        try:
            results[mode] = rate(group, [s.topic_bets], bets, procs)
        finally:
            stop(procs)
    return results


def latency(s: Settings, firsts: list[float]) -> list[float]:
    """Seconds from publishing a 10,000-bet round's result to its last committed settlement."""
    return asyncio.run(_latency(s, firsts))


async def _latency(s: Settings, firsts: list[float]) -> list[float]:
    from aiokafka import AIOKafkaConsumer  # type: ignore[import-untyped]
    from aiokafka import TopicPartition as Part

    procs = [
        start(
            ["-m", "services.cli", "worker", "--loglevel", "info"],
            f"latency-worker-{n}",
            environment(s),
        )
        for n in range(WORKERS)
    ]
    producer = KafkaProducer(
        bootstrap_servers=BOOTSTRAP, acks="all", linger_ms=5, batch_size=512 * 1024
    )
    reader = AIOKafkaConsumer(
        bootstrap_servers=BOOTSTRAP,
        isolation_level="read_committed",
        fetch_max_wait_ms=20,
        max_partition_fetch_bytes=8 * 1024 * 1024,
        fetch_max_bytes=32 * 1024 * 1024,
    )
    await reader.start()
    parts = [Part(s.topic_settlements, p) for p in range(PARTITIONS)]
    reader.assign(parts)
    await reader.seek_to_end(*parts)
    times: list[float] = []
    try:
        for n in range(LATENCY_ROUNDS):
            table = f"L{n % 3}"
            round_id = f"latency-{uuid.uuid4().hex[:8]}"
            head = f'"v":1,"table_id":"{table}","round_id":"{round_id}","at":"2026-11-29T12:00:00Z"'
            key = table.encode()
            opened = f'{{"type":"round.opened","event_id":"{round_id}-o",{head},"game":"sicbo"}}'
            producer.send(s.topic_rounds, key=key, value=opened.encode())
            for seq in range(1, 10_001):
                producer.send(
                    s.topic_bets,
                    key=key,
                    value=(
                        f'{{"type":"bet.placed","event_id":"{round_id}-{seq}",{head},'
                        f'"bet_id":"{round_id}-{seq}","player_id":"P{seq % 500}","seq":{seq},'
                        '"kind":"big","stake":100,"currency":"EUR"}'
                    ).encode(),
                )
            closed = f'{{"type":"round.betting_closed","event_id":"{round_id}-c",{head},"last_seq":10000}}'
            producer.send(s.topic_rounds, key=key, value=closed.encode())
            producer.flush()
            deadline = time.monotonic() + 300
            while (
                committed_lag(BOOTSTRAP, s.group_id, list(s.inputs)) and time.monotonic() < deadline
            ):
                await asyncio.sleep(0.1)
            await reader.getmany(timeout_ms=50)
            needle = f'"round_id":"{round_id}"'.encode()
            result = f'{{"type":"round.result","event_id":"{round_id}-r",{head},"dice":[1,2,{1 + n % 6}]}}'
            sent = time.monotonic()
            producer.send(s.topic_rounds, key=key, value=result.encode())
            producer.flush()
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
                f"  round {n + 1}/{LATENCY_ROUNDS}: committed and readable after {visible * 1000:.0f} ms,"
                f" all {seen:,} settlements read after {times[-1] * 1000:.0f} ms"
            )
    finally:
        producer.close()
        await reader.stop()
        stop(procs)
    return times


def main() -> None:
    s = settings()
    ensure(s, io.StringIO())
    say(
        f"bench topics prefix {s.topic_rounds.removesuffix('-rounds')}, {PARTITIONS} partitions, {WORKERS} worker(s)"
    )
    bets = preload(s)
    rounds = committed_total(s) - bets
    results = throughput(s, bets, rounds)
    s2 = settings()
    ensure(s2, io.StringIO())
    firsts: list[float] = []
    times = sorted(latency(s2, firsts))
    firsts.sort()
    print(f"\nthroughput on {bets:,} bets ({PARTITIONS} partitions, {WORKERS} croupier worker(s)):")
    print(f"  {'croupier pipeline (settled bets/s)':42}{results['croupier']:>12,.0f}")
    print(f"  {'faust pass-through agent (bets/s)':42}{results['faust']:>12,.0f}")
    print(f"  {'plain aiokafka copy loop (bets/s)':42}{results['aiokafka']:>12,.0f}")
    print(
        f"  ratio to faust pass-through: {results['croupier'] / results['faust']:.2f} (target >= 1.0)"
    )
    print(
        f"  ratio to aiokafka loop:      {results['croupier'] / results['aiokafka']:.2f} (target >= 0.5)"
    )
    print(f"latency from round.result, {len(times)} rounds of 10,000 bets (target p99 < 1000 ms):")
    print(f"  {'round committed, readable with read_committed':48}{_percentiles(firsts)}")
    print(f"  {'last of 10,000 settlements read (aiokafka)':48}{_percentiles(times)}")
    print(
        "  (one transaction holds the whole round, so all its settlements become readable at once)"
    )


def _percentiles(values: list[float]) -> str:
    p50 = statistics.median(values)
    p99 = values[min(len(values) - 1, round(0.99 * (len(values) - 1)))]
    return f"p50 {p50 * 1000:6.0f} ms  p99 {p99 * 1000:6.0f} ms"


def committed_total(s: Settings) -> int:
    consumer = KafkaConsumer(bootstrap_servers=BOOTSTRAP, group_id=None)
    tps = [TopicPartition(t, p) for t in s.inputs for p in range(PARTITIONS)]
    total = sum(consumer.end_offsets(tps).values())
    consumer.close()
    return int(total)


if __name__ == "__main__":
    main()
