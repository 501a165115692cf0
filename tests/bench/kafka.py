"""`make bench-kafka`: the pipeline on the local broker next to two pass-through baselines.

1. Throughput, same input for all three, preloaded: settled bets per second through croupier's
   workers, against a faust agent and a plain aiokafka loop that only copy `bets` unchanged.
   Each rate is measured between the group's first committed offset and its last (lag 0), so
   process start-up is left out of every side alike.
2. Latency: rounds of 10,000 bets; time from publishing `round.result` until the round's last
   settlement is readable with read_committed (p50, p99).
"""

from __future__ import annotations

import io
import os

from kafka.admin import KafkaAdminClient, NewTopic  # type: ignore[import-untyped]

from services.settings import Settings
from services.topics import ensure
from tests.bench.pipeline import (
    BOOTSTRAP,
    latency,
    percentiles,
    preload,
    rate,
    say,
    settled_rate,
    start,
    stop,
)
from tests.kafka import ROOT, isolated_settings

BETS = int(os.environ.get("CROUPIER_BENCH_KAFKA_BETS", "100000"))
LATENCY_ROUNDS = int(os.environ.get("CROUPIER_BENCH_LATENCY_ROUNDS", "10"))
PARTITIONS = int(os.environ.get("CROUPIER_BENCH_PARTITIONS", "4"))
WORKERS = int(os.environ.get("CROUPIER_BENCH_WORKERS", "1"))
LOGS = ROOT / "test-output" / "bench-kafka"


def settings() -> Settings:
    return isolated_settings(BOOTSTRAP, partitions=PARTITIONS)


def copy_topic(s: Settings, name: str) -> str:
    admin = KafkaAdminClient(bootstrap_servers=BOOTSTRAP)
    topic = f"{s.topic_bets}-{name}"
    admin.create_topics([NewTopic(name=topic, num_partitions=PARTITIONS, replication_factor=1)])
    admin.close()
    return topic


def throughput(s: Settings, bets: int) -> dict[str, float]:
    say("croupier workers ...")
    results = {"croupier": settled_rate(s, bets, WORKERS, LOGS, "worker")}
    for mode in ("faust", "aiokafka"):
        say(f"{mode} pass-through ...")
        target = copy_topic(s, mode)
        group = f"{s.group_id}-{mode}"
        args = ["-m", "tests.bench.passthrough", mode, s.topic_bets, target, group]
        procs = [start(args, mode, LOGS)]
        try:
            results[mode] = rate(group, [s.topic_bets], bets, procs, LOGS)
        finally:
            stop(procs)
    return results


def main() -> None:
    s = settings()
    ensure(s, io.StringIO())
    say(
        f"bench topics prefix {s.topic_rounds.removesuffix('-rounds')}, {PARTITIONS} partitions, {WORKERS} worker(s)"
    )
    bets = preload(s, BETS, tables=PARTITIONS * 4)
    results = throughput(s, bets)
    s2 = settings()
    ensure(s2, io.StringIO())
    firsts, times = latency(s2, LATENCY_ROUNDS, WORKERS, LOGS)
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
    print(f"  {'round committed, readable with read_committed':48}{percentiles(firsts)}")
    print(f"  {'last of 10,000 settlements read (aiokafka)':48}{percentiles(times)}")
    print(
        "  (one transaction holds the whole round, so all its settlements become readable at once)"
    )


if __name__ == "__main__":
    main()
