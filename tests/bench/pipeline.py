"""What the Kafka benchmarks share: worker processes, preloaded input, committed throughput, and
the latency of a 10,000-bet round's settlement."""

from __future__ import annotations

import gc
import os
import re
import statistics
import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kafka import KafkaConsumer, KafkaProducer, TopicPartition  # type: ignore[import-untyped]

from services.audit.reader import committed_lag
from services.collector import paused
from services.ports import free_port
from services.reading import take
from services.settings import Settings
from services.simulation.streams import CLEAN, Profile, generate
from tests.bench.meters import Processor
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
    return _publish(s, tables, lambda rounds, published: published >= bets)[1]


def preload_floor(s: Settings, events: int, tables: int) -> tuple[int, int]:
    """A floor of `tables` tables, clean rounds of 150-250 bets, about `events` events of `rounds`
    and `bets` in all; returns (round events, bets) published."""
    return _publish(s, tables, lambda rounds, published: rounds + published >= events)


def _publish(s: Settings, tables: int, enough: Callable[[int, int], bool]) -> tuple[int, int]:
    profile = Profile(**{**CLEAN.__dict__, "bets_per_round": (150, 250)})
    out = producer()
    rounds = published = 0
    seed = 0
    while not enough(rounds, published):
        streams = generate(seed, tables=tables, rounds=2, profile=profile, first_round=seed * 2)
        for raw in streams.rounds:
            out.send(s.topic_rounds, value=raw, key=table_of(raw))
        for raw in streams.bets:
            out.send(s.topic_bets, value=raw, key=table_of(raw))
        rounds += len(streams.rounds)
        published += len(streams.bets)
        seed += 1
        say(f"  published {rounds:,} round events and {published:,} bets")
    out.flush()
    out.close()
    return rounds, published


def start(
    args: list[str],
    name: str,
    logs: Path,
    env: dict[str, str] | None = None,
    cwd: Path = ROOT,
) -> subprocess.Popen[bytes]:
    """A Python process of this repository (or of the checkout `cwd`), its output in
    `logs`/`name`.log."""
    logs.mkdir(parents=True, exist_ok=True)
    with open(logs / f"{name}.log", "wb") as log:
        return subprocess.Popen(
            [sys.executable, *args],
            cwd=cwd,
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


SAYS_WHERE = (
    "import sys, services; "
    "print('services imported from', services.__file__, file=sys.stderr, flush=True); "
    "from services.cli import main; sys.exit(main(sys.argv[1:]))"
)
"""A `croupier` command (its arguments after `-c SAYS_WHERE`) that first says where its
`services` package was imported from."""


def worker_of(
    code: Path, s: Settings, name: str, logs: Path, loglevel: str = "warning", **extra: str
) -> subprocess.Popen[bytes]:
    """One `croupier worker` of the checkout `code` (this repository, or a worktree of another
    commit), run by this venv's Python in that checkout with it first on PYTHONPATH (croupier is
    installed editable from this repository); its log says where its `services` came from (see
    `imported_from`)."""
    env = {**environment(s), "PYTHONUNBUFFERED": "1", "PYTHONPATH": str(code), **extra}
    args = ["-c", SAYS_WHERE, "worker", "--loglevel", loglevel]
    return start(args, name, logs, env, cwd=code)


def imported_from(log: Path) -> str:
    """Where a process started with SAYS_WHERE imported `services` from, as its log says."""
    for line in log.read_text(errors="replace").splitlines():
        if line.startswith("services imported from "):
            return line.removeprefix("services imported from ")
    raise RuntimeError(f"{log} does not say where its services package came from")


def stop(processes: list[subprocess.Popen[bytes]]) -> None:
    for p in processes:
        p.terminate()
    for p in processes:
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()


class Lag:
    """A group's committed lag on topics (messages not committed yet), asked again and again
    through one librdkafka client: a fresh admin client and consumer a call (committed_lag) took
    0.2 s and 20 ms of processor time, beside the processes measured."""

    def __init__(self, group: str, topics: list[str]) -> None:
        from confluent_kafka import Consumer, TopicPartition

        self.consumer = Consumer(
            {"bootstrap.servers": BOOTSTRAP, "group.id": group, "enable.auto.commit": False}
        )
        known = self.consumer.list_topics(timeout=30).topics
        self.parts = [TopicPartition(t, p) for t in topics for p in sorted(known[t].partitions)]

    def __call__(self) -> int | None:
        """The lag now; None when the broker cannot say yet (the group's coordinator loading)."""
        from confluent_kafka import KafkaError, KafkaException

        loading = (KafkaError.NOT_COORDINATOR, KafkaError.COORDINATOR_LOAD_IN_PROGRESS)
        try:
            committed = self.consumer.committed(self.parts, timeout=30)
            ends = [self.consumer.get_watermark_offsets(tp, timeout=30)[1] for tp in self.parts]
        except KafkaException as error:
            if error.args[0].retriable() or error.args[0].code() in loading:  # a fresh broker
                return None
            raise
        return sum(end - max(tp.offset, 0) for tp, end in zip(committed, ends, strict=True))

    def close(self) -> None:
        self.consumer.close()


def rate(
    group: str,
    topics: list[str],
    total: int,
    processes: list[subprocess.Popen[bytes]],
    logs: Path,
    on_first: Callable[[], None] | None = None,
    first_within: float = 900.0,
    meter: Processor | None = None,
) -> float:
    """Messages per second between the group's first commit and lag 0 (`on_first` called when
    the first commit is seen; none within `first_within` seconds fails); `meter` measures the
    processor time used meanwhile."""
    first: tuple[float, int] | None = None
    began = time.monotonic()
    deadline = began + 900
    lag_of = Lag(group, topics)
    try:
        while time.monotonic() < deadline:
            for p in processes:
                if p.poll() is not None:
                    raise RuntimeError(f"a benchmark process exited ({p.args}); see {logs}")
            lag = lag_of()
            now = time.monotonic()
            if lag is None:
                time.sleep(0.1)
                continue
            done = total - lag
            if first is None and done > 0:
                first = (now, done)
                if meter is not None:
                    meter.start()
                if on_first is not None:
                    on_first()
            if first is None and now - began > first_within:
                raise TimeoutError(
                    f"group {group} committed nothing within {first_within:.0f} s; see {logs}"
                )
            if lag == 0 and first is not None:
                if meter is not None:
                    meter.stop(total - first[1])
                elapsed = now - first[0]
                if elapsed > 0:
                    return (total - first[1]) / elapsed
                say(
                    f"  group {group} committed everything before a first part of it was seen: "
                    "the rate is measured from the processes' start (start-up included)"
                )
                return total / (now - began)
            time.sleep(0.05)
    finally:
        lag_of.close()
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


def events_rate(
    s: Settings,
    workers: int,
    logs: Path,
    name: str,
    code: Path | None = None,
    meter: Processor | None = None,
    loop: dict[str, float] | None = None,
) -> float:
    """Input events (rounds and bets) per second decided by `workers` croupier workers over
    preloaded input: every event of both inputs committed by the group. `code`: the workers of
    that checkout (`worker_of`) instead of this repository's; `meter`: their processor time;
    `loop`: where their loops spent that time, by part (their croupier_loop_seconds_total, added
    up; a checkout without it adds nothing)."""
    ports = [free_port() for _ in range(workers)]
    procs = [
        worker(s, f"{name}-{n}", logs, CROUPIER_WEB_PORT=str(port))
        if code is None
        else worker_of(code, s, f"{name}-{n}", logs, CROUPIER_WEB_PORT=str(port))
        for n, port in enumerate(ports)
    ]
    if meter is not None:
        meter.watch(p.pid for p in procs)
    try:
        total = committed_total(s)
        return rate(s.group_id, list(s.inputs), total, procs, logs, first_within=180, meter=meter)
    finally:
        if loop is not None:
            for port in ports:
                for part, seconds in loop_seconds(port).items():
                    loop[part] = loop.get(part, 0.0) + seconds
        stop(procs)


LOOP = re.compile(r'^croupier_loop_seconds_total\{part="(\w+)"\} ([0-9.]+)$', re.MULTILINE)


def loop_seconds(port: int) -> dict[str, float]:
    """A running worker's croupier_loop_seconds_total by part (empty if it does not answer)."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as answer:
            text = answer.read().decode()
    except OSError:
        return {}
    return {part: float(seconds) for part, seconds in LOOP.findall(text)}


def committed_total(s: Settings) -> int:
    """Messages in both inputs now."""
    consumer = KafkaConsumer(bootstrap_servers=BOOTSTRAP, group_id=None)
    tps = [TopicPartition(t, p) for t in s.inputs for p in range(s.partitions)]
    total = sum(consumer.end_offsets(tps).values())
    consumer.close()
    return int(total)


def latency(
    s: Settings,
    rounds: int,
    workers: int,
    logs: Path,
    name: str = "latency-worker",
    code: Path | None = None,
    **env: str,
) -> tuple[list[float], list[float]]:
    """Seconds from publishing a 10,000-bet round's result until its settlements are readable
    with read_committed: (the first of them, all 10,000), one pair per round, sorted. `code`: the
    workers of that checkout (`worker_of`) instead of this repository's.

    A warm-up round comes first, told but not counted: the first transaction of a fresh worker
    on fresh topics writes their partitions' first segments and learns their leaders, once.
    The bench's own process is the instrument: what it built before the rounds is frozen from
    its garbage collector, and the collector is off from the result's publishing until the
    round is read, so that none of its full collections lands in what it measures; they run
    while it publishes the next round's bets instead (docs/BENCHMARKS.md)."""
    firsts: list[float] = []
    times = _latency(s, rounds, workers, logs, name, firsts, env, code)
    return sorted(firsts), sorted(times)


class Readable:
    """What a read_committed reader of `settlements` sees from their end on: croupier's own
    reader (`reading.reader`, librdkafka, which fetches and parses records in threads of its
    own), polling every 20 ms at most, as a wallet's client would."""

    def __init__(self, s: Settings) -> None:
        from confluent_kafka import TopicPartition as Part

        from services.reading import reader

        self.consumer = reader(
            s.model_copy(update={"kafka_bootstrap": BOOTSTRAP}),
            "bench-reader",
            **{"fetch.wait.max.ms": 5, "fetch.max.bytes": 64 * 1024 * 1024},
        )
        parts = [Part(s.topic_settlements, p) for p in range(s.output_partitions)]
        self.consumer.assign([Part(t.topic, t.partition, self._end(t)) for t in parts])

    def _end(self, part: Any) -> int:
        """The partition's last stable offset, once a leader answers (the topic may be new)."""
        from confluent_kafka import KafkaException

        from services.reading import bounds_of

        deadline = time.monotonic() + 60
        while True:
            try:
                return bounds_of(self.consumer, part)[1]
            except KafkaException:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)

    def drain(self) -> None:
        """Read what is readable now, so that the next count starts after it."""
        while self.consumer.consume(num_messages=100_000, timeout=0.05):
            pass

    def count(
        self, needle: bytes, want: int, since: float, within: float
    ) -> tuple[float, float, int]:
        """Seconds after `since` (monotonic) until the first and until the `want`th record holding
        `needle` was read, and how many were."""
        seen = 0
        first = 0.0
        while seen < want and time.monotonic() < since + within:
            for message in take(self.consumer, 100_000, 0.02):
                value = message.value()
                if value is not None and needle in value:
                    seen += 1
            if seen and not first:
                first = time.monotonic() - since
        return first, time.monotonic() - since, seen

    def close(self) -> None:
        self.consumer.close()


def _latency(
    s: Settings,
    rounds: int,
    workers: int,
    logs: Path,
    name: str,
    firsts: list[float],
    env: dict[str, str],
    code: Path | None,
) -> list[float]:
    procs = [
        worker(s, f"{name}-{n}", logs, "info", **env)
        if code is None
        else worker_of(code, s, f"{name}-{n}", logs, "info")
        for n in range(workers)
    ]
    out = producer(linger_ms=5)
    reader = Readable(s)
    times: list[float] = []
    gc.collect()
    gc.freeze()
    try:
        for n in range(-1, rounds):
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
                time.sleep(0.1)
            reader.drain()
            needle = f'"round_id":"{round_id}"'.encode()
            result = f'{{"type":"round.result","event_id":"{round_id}-r",{head},"dice":[1,2,{1 + n % 6}]}}'
            with paused():
                sent = time.monotonic()
                out.send(s.topic_rounds, key=key, value=result.encode())
                out.flush()
                visible, took, seen = reader.count(needle, 10_000, sent, 120)
            if n >= 0:
                firsts.append(visible)
                times.append(took)
            say(
                f"  round {n + 1}/{rounds}"
                + (" (warm-up, not counted)" if n < 0 else "")
                + f": committed and readable after {visible * 1000:.0f} ms,"
                f" all {seen:,} settlements read after {took * 1000:.0f} ms"
            )
    finally:
        gc.unfreeze()
        out.close()
        reader.close()
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
