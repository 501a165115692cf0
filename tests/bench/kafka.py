"""`make bench-kafka`: the pipeline on the local broker next to pass-through baselines.

1. Throughput over one preloaded floor (CROUPIER_BENCH_TABLES tables, 40; about
   CROUPIER_BENCH_KAFKA_EVENTS events of `rounds` and `bets`, 300,000): input events per second
   decided by croupier's workers (every event of both topics committed by their group), and by
   pass-throughs that copy the same `rounds` and `bets` unchanged to a copy topic:
   - `aiokafka`: a plain aiokafka consume-and-produce loop, committing after each batch, no
     transactions;
   - `librdkafka`: a confluent-kafka transactional copy loop (read_committed, one transaction a
     batch holding the copies and the consumed offsets), the exactly-once floor of the client
     the worker moves to;
   - `faust`: a faust-streaming agent over both topics (the framework's per-event path).
   Each rate is measured between the group's first committed offset and its last (lag 0), so
   process start-up is left out of every side alike. CROUPIER_BENCH_BASELINES picks the
   baselines (aiokafka,librdkafka,faust); CROUPIER_BENCH_KAFKA_REPEATS (1) runs every side again
   that many times, taking turns, each on the same input with a group of its own.
2. Latency: rounds of 10,000 bets (CROUPIER_BENCH_LATENCY_ROUNDS, 10); time from publishing
   `round.result` until the round's first and last settlements are read with read_committed by
   croupier's own librdkafka reader, which returns what it holds as soon as it holds any
   (`pipeline.Readable`; p50, p99). One warm-up round comes first, told but not counted, and
   the bench's own garbage collector stays out of the measured window (`pipeline.latency`).

CROUPIER_BENCH_CROUPIER=0 measures the baselines alone (a worker being rewritten may not run).
The bench's topics are deleted at the end (CROUPIER_BENCH_KEEP=1 keeps them).
"""

from __future__ import annotations

import io
import os
import signal
import statistics
import sys

from kafka.admin import KafkaAdminClient, NewTopic  # type: ignore[import-untyped]

from services.settings import Settings
from services.topics import ensure
from tests.bench.meters import Processor
from tests.bench.pipeline import (
    BOOTSTRAP,
    events_rate,
    latency,
    p99,
    percentiles,
    preload_floor,
    rate,
    say,
    start,
    stop,
    variant,
)
from tests.bench.results import Figure, Run, figure
from tests.kafka import ROOT, isolated_settings

EVENTS = int(os.environ.get("CROUPIER_BENCH_KAFKA_EVENTS", "300000"))
TABLES = int(os.environ.get("CROUPIER_BENCH_TABLES", "40"))
LATENCY_ROUNDS = int(os.environ.get("CROUPIER_BENCH_LATENCY_ROUNDS", "10"))
PARTITIONS = int(os.environ.get("CROUPIER_BENCH_PARTITIONS", "4"))
WORKERS = int(os.environ.get("CROUPIER_BENCH_WORKERS", "1"))
REPEATS = int(os.environ.get("CROUPIER_BENCH_KAFKA_REPEATS", "1"))
BASELINES = [
    b
    for b in os.environ.get("CROUPIER_BENCH_BASELINES", "aiokafka,librdkafka,faust").split(",")
    if b
]
CROUPIER = os.environ.get("CROUPIER_BENCH_CROUPIER", "1") not in ("", "0")
KEEP = os.environ.get("CROUPIER_BENCH_KEEP", "") not in ("", "0")
LOGS = ROOT / "test-output" / "bench-kafka"

LABELS = {
    "croupier": "croupier worker (events decided/s)",
    "aiokafka": "aiokafka copy loop, no transactions",
    "librdkafka": "librdkafka transactional copy loop",
    "faust": "faust pass-through agent",
}
TARGETS = {"librdkafka": 0.8}
"""The least ratio of croupier to a baseline the issue asks for."""


def settings() -> Settings:
    return isolated_settings(BOOTSTRAP, partitions=PARTITIONS)


def copy_topic(s: Settings, name: str) -> str:
    """A topic of its own, as many partitions as the inputs, for one baseline's copies."""
    admin = KafkaAdminClient(bootstrap_servers=BOOTSTRAP)
    topic = f"{s.topic_rounds.removesuffix('-rounds')}-copy-{name}"
    admin.create_topics([NewTopic(name=topic, num_partitions=PARTITIONS, replication_factor=1)])
    admin.close()
    return topic


def delete_bench_topics(*every: Settings) -> None:
    """Every topic named after these settings' prefixes: their inputs and outputs, the variants'
    outputs, the copies, the topics faust made for itself."""
    prefixes = tuple(f"{s.topic_rounds.removesuffix('-rounds')}-" for s in every)
    admin = KafkaAdminClient(bootstrap_servers=BOOTSTRAP)
    try:
        names = sorted(t for t in admin.list_topics() if t.startswith(prefixes))
        for at in range(0, len(names), 100):
            admin.delete_topics(names[at : at + 100])
    finally:
        admin.close()


def baseline(s: Settings, mode: str, total: int, tag: str, meter: Processor) -> float:
    """Input events per second of one pass-through over both inputs of `s`."""
    target = copy_topic(s, f"{mode}-{tag}")
    group = f"{s.group_id}-{mode}-{tag}"
    args = ["-m", "tests.bench.passthrough", mode, target, group, *s.inputs]
    procs = [start(args, f"{mode}-{tag}", LOGS)]
    meter.watch(p.pid for p in procs)
    try:
        return rate(group, list(s.inputs), total, procs, LOGS, meter=meter)
    finally:
        stop(procs)


def throughput(
    s: Settings, total: int
) -> tuple[dict[str, list[float]], dict[str, list[Processor]], list[str]]:
    """Every side's rates, REPEATS each, taking turns, with the processor time each run used;
    and how croupier's runs failed, if they did (the baselines are measured all the same)."""
    sides = (["croupier"] if CROUPIER else []) + BASELINES
    results: dict[str, list[float]] = {side: [] for side in sides}
    meters: dict[str, list[Processor]] = {side: [] for side in sides}
    failures: list[str] = []
    for n in range(REPEATS):
        tag = f"r{n}"
        if CROUPIER:
            say(f"croupier worker(s), run {n + 1}/{REPEATS} ...")
            run = s if n == 0 else variant(s, tag)
            ensure(run, io.StringIO())
            meter = Processor()
            loop: dict[str, float] = {}
            try:
                results["croupier"].append(
                    events_rate(run, WORKERS, LOGS, f"worker-{tag}", meter=meter, loop=loop)
                )
                meters["croupier"].append(meter)
                say(f"  {results['croupier'][-1]:,.0f} events/s{cost(meter)}")
                if loop:
                    spent = sum(loop.values())
                    shares = ", ".join(f"{part} {t / spent:.0%}" for part, t in loop.items())
                    say(f"  the worker's loop: {shares}")
            except (RuntimeError, TimeoutError) as error:
                failures.append(str(error))
                say(f"  croupier failed: {error}")
        for mode in BASELINES:
            say(f"{mode} pass-through, run {n + 1}/{REPEATS} ...")
            meter = Processor()
            results[mode].append(baseline(s, mode, total, tag, meter))
            meters[mode].append(meter)
            say(f"  {results[mode][-1]:,.0f} events/s{cost(meter)}")
    return results, meters, failures


def machine_cost(runs: list[Processor]) -> float:
    """Microseconds of processor time an event, its process and the broker, median of runs."""
    return statistics.median(sum(b or 0.0 for b in m.per_event()) for m in runs)


def cost(meter: Processor) -> str:
    """What an event cost the machine in a run, said after its rate."""
    ours, broker = meter.per_event()
    if broker is None:
        return f"; processor time an event: {ours:.1f} us"
    return (
        f"; processor time an event: {ours + broker:.1f} us"
        f" ({ours:.1f} us its process, {broker:.1f} us the broker)"
    )


def report(
    results: dict[str, list[float]], meters: dict[str, list[Processor]], rounds: int, bets: int
) -> None:
    total = rounds + bets
    print(
        f"\nthroughput on one floor of {TABLES} tables: {total:,} events ({rounds:,} round events,"
        f" {bets:,} bets), {PARTITIONS} partitions, {WORKERS} croupier worker(s); every side reads"
        f" both `rounds` and `bets`; load average {os.getloadavg()[0]:.2f}"
    )
    each = REPEATS > 1
    print(f"  {'':44}{'events/s':>12}" + ("   (median of runs; each run)" if each else ""))
    for side, rates in results.items():
        if not rates:
            print(f"  {LABELS[side]:44}{'failed':>12}")
            continue
        line = f"  {LABELS[side]:44}{statistics.median(rates):>12,.0f}"
        if each:
            line += "   " + ", ".join(f"{r:,.0f}" for r in rates)
        print(line)
    print("  processor time an event, median of the runs (its process + the local broker):")
    for side, runs in meters.items():
        if runs:
            ours = statistics.median(m.per_event()[0] for m in runs)
            brokers = [b for b in (m.per_event()[1] for m in runs) if b is not None]
            broker = f" + {statistics.median(brokers):5.1f} us" if brokers else ""
            print(f"    {LABELS[side]:42}{ours:7.1f} us{broker}")
    if not results.get("croupier"):
        return
    ours = statistics.median(results["croupier"])
    print(f"  {'croupier, settled bets/s':44}{ours * bets / total:>12,.0f}")
    for side in BASELINES:
        theirs = statistics.median(results[side])
        target = f" (target >= {TARGETS[side]})" if side in TARGETS else ""
        print(f"  ratio croupier / {side + ':':12}{ours / theirs:6.2f}{target}")


def figures(
    results: dict[str, list[float]],
    meters: dict[str, list[Processor]],
    rounds: int,
    bets: int,
    firsts: list[float],
    times: list[float],
) -> list[Figure]:
    """The run's figures for its result file: croupier's rate next to each baseline's (medians
    of the runs), what an event cost the machine, its settled bets, and the latency of a
    10,000-bet round."""
    total = rounds + bets
    ours = statistics.median(results["croupier"])
    floor = f"{total:,} events ({bets:,} bets), {PARTITIONS} partitions, {WORKERS} worker(s)"
    found = [
        figure(
            f"worker_vs_{side}",
            f"croupier worker, events decided/s (one floor: {floor})",
            ours,
            "events/s",
            baseline=(LABELS[side], statistics.median(results[side])),
            target=("ratio", "at least", TARGETS[side]) if side in TARGETS else None,
            note=f"median of {REPEATS} run(s) a side" if REPEATS > 1 else "",
        )
        for side in BASELINES
        if results[side]
    ]
    if meters["croupier"] and meters.get("librdkafka"):
        found.append(
            figure(
                "processor_time_an_event",
                "processor time an event: croupier's worker and the local broker (median of runs)",
                machine_cost(meters["croupier"]),
                "us",
                baseline=(LABELS["librdkafka"], machine_cost(meters["librdkafka"])),
            )
        )
    found.append(
        figure("settled_bets", f"croupier, settled bets/s ({floor})", ours * bets / total, "bets/s")
    )
    rounds_of = f"{len(times)} rounds of 10,000 bets"
    for name, label, values in (
        ("round_committed", "round.result to the round committed (read_committed)", firsts),
        ("round_read", "round.result to the last of its 10,000 settlements read", times),
    ):
        found += [
            figure(
                f"{name}_p50",
                f"{label}, p50 of {rounds_of}",
                statistics.median(values) * 1000,
                "ms",
            ),
            figure(
                f"{name}_p99",
                f"{label}, p99 of {rounds_of}",
                p99(values) * 1000,
                "ms",
                target=("value", "at most", 100.0) if name == "round_read" else None,
            ),
        ]
    return found


def main() -> None:
    run = Run("bench-kafka")
    # A SIGTERM (Ctrl-C's cousin) ends the run through its clean-up: processes and topics.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    s = settings()
    ensure(s, io.StringIO())
    say(
        f"bench topics prefix {s.topic_rounds.removesuffix('-rounds')}, {PARTITIONS} partitions,"
        f" {WORKERS} worker(s), {TABLES} tables, about {EVENTS:,} events"
    )
    s2 = settings()
    try:
        rounds, bets = preload_floor(s, EVENTS, tables=TABLES)
        results, meters, failures = throughput(s, rounds + bets)
        if CROUPIER and not failures:
            ensure(s2, io.StringIO())
            firsts, times = latency(s2, LATENCY_ROUNDS, WORKERS, LOGS)
        report(results, meters, rounds, bets)
        if failures:
            print(f"croupier's worker failed, so no ratio and no latency: {failures[0]}")
            sys.exit(1)
        if not CROUPIER:
            print("croupier's worker left out (CROUPIER_BENCH_CROUPIER=0): no ratio, no latency")
            return
        print(
            f"latency from round.result, {len(times)} rounds of 10,000 bets (target p99 < 100 ms):"
        )
        print(f"  {'round committed, readable with read_committed':48}{percentiles(firsts)}")
        print(f"  {'last of 10,000 settlements read (librdkafka)':48}{percentiles(times)}")
        print(
            "  (one transaction holds the whole round, so all its settlements become readable at once)"
        )
        run.save(figures(results, meters, rounds, bets, firsts, times))
    finally:
        if not KEEP:
            delete_bench_topics(s, s2)


if __name__ == "__main__":
    main()
