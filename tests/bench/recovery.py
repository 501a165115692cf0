"""`make bench-recovery`: takeover after kill -9 against the length of the history, and what the
durable state costs the pipeline.

1. Takeover, for each history size (200,000 and 2,000,000 events; `--sizes`): a generated floor
   (`--tables`, every contract case, enough rounds per table that each holds a full horizon, so
   the state is the same size at both lengths) is published; one worker (`CROUPIER_INSTANCE_ID=w0`)
   settles it all (committed lag 0); it is killed -9; a replacement with the same instance id is
   started and one new round is published on a table of the floor. Takeover is the time from the
   replacement's start until that round's settlements are readable with read_committed. Printed
   with what the replacement's log says it restored and refolded, where the time went (process
   start, group join, restore, first round), and the worker's RSS after catch-up and after
   takeover.
2. `make bench-kafka`'s throughput (settled bets/s over preloaded input) and 10,000-bet round
   latency, with `CROUPIER_DURABLE_STATE` true and false, runs taking turns.
"""

from __future__ import annotations

import argparse
import io
import signal
import statistics
import subprocess
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from services.audit.reader import committed_lag
from services.settings import Settings
from services.simulation.streams import Profile, generate
from services.topics import ensure
from tests.bench.meters import cpu_seconds, rss_bytes
from tests.bench.pipeline import (
    BOOTSTRAP,
    Readable,
    committed_total,
    latency,
    p99,
    percentiles,
    preload,
    producer,
    rate,
    say,
    stop,
    variant,
    worker,
)
from tests.bench.recovery_report import pipeline_figures, report, takeover_figures
from tests.bench.results import Figure, Run
from tests.kafka import ROOT, isolated_settings, table_of
from tests.worker_log import Restore, restored

LOGS = ROOT / "test-output" / "bench-recovery"
NEW_ROUND_BETS = 10


@dataclass(frozen=True, kw_only=True)
class Takeover:
    """One history size's figures."""

    events: int
    durable: bool
    live: bool
    publish_s: float
    catch_up_s: float
    caught_up: Restore
    restore: Restore
    takeover_s: float
    started_at: float
    rss_caught_up: int
    rss_takeover: int
    cpu_takeover: float
    load: str


def history(s: Settings, events: int, tables: int) -> int:
    """Publish a generated floor of `tables` tables until about `events` events; returns how many."""
    out = producer()
    published = 0
    chunk = 0
    while published < events:
        streams = generate(
            1000 + chunk, tables=tables, rounds=10, profile=Profile(), first_round=chunk * 10
        )
        for raw in streams.rounds:
            out.send(s.topic_rounds, value=raw, key=table_of(raw))
        for raw in streams.bets:
            out.send(s.topic_bets, value=raw, key=table_of(raw))
        published += len(streams.rounds) + len(streams.bets)
        chunk += 1
        if chunk % 25 == 0:
            say(f"  published {published:,} events")
    out.flush()
    out.close()
    return published


def new_round(table: str) -> tuple[str, list[tuple[str, bytes]]]:
    """A Sic Bo round of a few bets on `table`: its id and its messages, in order."""
    round_id = f"takeover-{uuid.uuid4().hex[:8]}"
    head = f'"v":1,"table_id":"{table}","round_id":"{round_id}","at":"2026-12-01T12:00:00Z"'
    messages = [
        ("rounds", f'{{"type":"round.opened","event_id":"{round_id}-o",{head},"game":"sicbo"}}')
    ]
    for seq in range(1, NEW_ROUND_BETS + 1):
        body = (
            f'{{"type":"bet.placed","event_id":"{round_id}-{seq}",{head},"bet_id":"{round_id}-{seq}",'
            f'"player_id":"P{seq}","seq":{seq},"kind":"big","stake":100,"currency":"EUR"}}'
        )
        messages.append(("bets", body))
    closed = f'"last_seq":{NEW_ROUND_BETS}'
    messages.append(
        ("rounds", f'{{"type":"round.betting_closed","event_id":"{round_id}-c",{head},{closed}}}')
    )
    messages.append(
        ("rounds", f'{{"type":"round.result","event_id":"{round_id}-r",{head},"dice":[2,5,6]}}')
    )
    return round_id, [(kind, body.encode()) for kind, body in messages]


def wait_settled(s: Settings, process: subprocess.Popen[bytes], timeout: float = 1800) -> float:
    """Until the group committed every input message; returns the seconds it took."""
    started = time.monotonic()
    while committed_lag(Settings(kafka_bootstrap=BOOTSTRAP), s.group_id, list(s.inputs)) != 0:
        if process.poll() is not None:
            raise RuntimeError(f"the worker exited with {process.returncode}; see {LOGS}")
        if time.monotonic() - started > timeout:
            raise TimeoutError(f"the worker did not settle the history in {timeout:.0f} s")
        time.sleep(0.5)
    return time.monotonic() - started


def one_round_each(s: Settings, tables: int) -> None:
    """Publish one new round on every table, as a live floor goes on after a catch-up."""
    out = producer()
    for t in range(tables):
        table = f"T{t:03d}"
        for kind, raw in new_round(table)[1]:
            topic = s.topic_rounds if kind == "rounds" else s.topic_bets
            out.send(topic, value=raw, key=table.encode())
    out.flush()
    out.close()


def takeover(
    events: int, tables: int, partitions: int, durable: bool, live: bool = False
) -> Takeover:
    s = isolated_settings(BOOTSTRAP, partitions=partitions, durable_state=durable)
    ensure(s, io.StringIO())
    tag = f"{events}-{'on' if durable else 'off'}"
    say(
        f"history of {events:,} events on {tables} tables, durable state {'on' if durable else 'off'}"
    )
    began = time.monotonic()
    published = history(s, events, tables)
    publish_s = time.monotonic() - began
    say(f"  {published:,} events published in {publish_s:.1f} s; one worker settles them")
    first = worker(s, f"{tag}-w0-first", LOGS, "info", CROUPIER_INSTANCE_ID="w0")
    try:
        catch_up_s = wait_settled(s, first)
        if live:
            one_round_each(s, tables)
            wait_settled(s, first)
        rss_caught_up = rss_bytes(first.pid)
    except BaseException:
        stop([first])
        raise
    say(f"  settled in {catch_up_s:.1f} s (RSS {rss_caught_up / 2**20:.0f} MiB); kill -9")
    timing = _replace(s, first, tag)
    return Takeover(
        events=published,
        durable=durable,
        live=live,
        publish_s=publish_s,
        catch_up_s=catch_up_s,
        caught_up=restored(LOGS / f"{tag}-w0-first.log"),
        restore=restored(LOGS / f"{tag}-w0-replacement.log"),
        takeover_s=timing[0],
        started_at=timing[1],
        rss_caught_up=rss_caught_up,
        rss_takeover=timing[2],
        cpu_takeover=timing[3],
        load=" ".join(Path("/proc/loadavg").read_text().split()[:3]),
    )


def _replace(
    s: Settings, first: subprocess.Popen[bytes], tag: str
) -> tuple[float, float, int, float]:
    """Kill -9 `first`, start its replacement, publish a round: (takeover s, start epoch, RSS,
    processor seconds the replacement used until then)."""
    reader = Readable(s)
    reader.drain()
    round_id, messages = new_round("T000")
    needle = f'"round_id":"{round_id}"'.encode()
    out = producer(linger_ms=0)
    first.send_signal(signal.SIGKILL)
    first.wait()
    epoch = time.time()
    began = time.monotonic()
    replacement = worker(s, f"{tag}-w0-replacement", LOGS, "info", CROUPIER_INSTANCE_ID="w0")
    try:
        for kind, raw in messages:
            out.send(s.topic_rounds if kind == "rounds" else s.topic_bets, value=raw, key=b"T000")
        out.flush()
        seen = 0
        while seen < NEW_ROUND_BETS:
            if replacement.poll() is not None:
                raise RuntimeError(f"the replacement exited with {replacement.returncode}")
            if time.monotonic() - began > 600:
                raise TimeoutError("the new round was not settled within 10 minutes")
            seen += reader.count(needle, NEW_ROUND_BETS - seen, time.monotonic(), 0.2)[2]
        took = time.monotonic() - began
        return took, epoch, rss_bytes(replacement.pid), cpu_seconds(replacement.pid)
    finally:
        out.close()
        reader.close()
        stop([replacement])


def pipeline(
    bets: int, partitions: int, repeats: int, rounds: int
) -> tuple[list[str], list[Figure]]:
    """Throughput over one preloaded input and 10,000-bet latency, state on and off in turns
    (on, off, off, on, ...): the report's lines and the figures."""
    s = isolated_settings(BOOTSTRAP, partitions=partitions)
    ensure(s, io.StringIO())
    say(f"throughput: preloading about {bets:,} bets")
    published = preload(s, bets, tables=partitions * 4)
    rates: dict[bool, list[float]] = {True: [], False: []}
    cpus: dict[bool, list[float]] = {True: [], False: []}
    latencies: dict[bool, list[float]] = {True: [], False: []}
    for n in range(repeats):
        for durable in _turns(n):
            run = variant(s.model_copy(update={"durable_state": durable}), f"r{n}{int(durable)}")
            ensure(run, io.StringIO())
            settled, used = _rate_and_cpu(run, published, f"rate-{n}-{durable}")
            rates[durable].append(settled)
            cpus[durable].append(used)
            say(
                f"  durable state {durable}: {settled:,.0f} settled bets/s, worker cpu {used:.1f} s"
            )
    for n in range(repeats):
        for durable in _turns(n):
            say(f"latency, durable state {durable}")
            fresh = isolated_settings(BOOTSTRAP, partitions=partitions, durable_state=durable)
            ensure(fresh, io.StringIO())
            latencies[durable] += latency(fresh, rounds, 1, LOGS, f"latency-{n}-{durable}")[1]
    for times in latencies.values():
        times.sort()
    on, off = statistics.median(rates[True]), statistics.median(rates[False])
    lines = [
        f"throughput on {published:,} bets ({partitions} partitions, 1 worker), median of {repeats}:",
        f"  durable state on   {on:>10,.0f} settled bets/s  (runs {_runs(rates[True])})",
        f"  durable state off  {off:>10,.0f} settled bets/s  (runs {_runs(rates[False])})",
        f"  on/off {on / off:.2f} (target >= 0.90)",
        f"  the worker's processor time for it all (its start included): on "
        f"{_runs(cpus[True], '.1f')} s, off {_runs(cpus[False], '.1f')} s, median on/off "
        f"{statistics.median(cpus[True]) / statistics.median(cpus[False]):.2f}",
        f"latency from round.result to all 10,000 settlements readable, {repeats} x {rounds} rounds"
        " (target p99 < 250 ms):",
        f"  durable state on   {percentiles(latencies[True])}",
        f"  durable state off  {percentiles(latencies[False])}",
        f"  p99 on/off {p99(latencies[True]) / p99(latencies[False]):.2f}",
        f"  load average at the end: {' '.join(Path('/proc/loadavg').read_text().split()[:3])}",
    ]
    return lines, pipeline_figures(published, rates, latencies, repeats)


def _turns(n: int) -> tuple[bool, bool]:
    """On then off, then off then on: the machine's drift weighs on both alike (ABBA)."""
    return (True, False) if n % 2 == 0 else (False, True)


def _runs(values: list[float], spec: str = ",.0f") -> str:
    return ", ".join(format(v, spec) for v in values)


def _rate_and_cpu(s: Settings, bets: int, name: str) -> tuple[float, float]:
    """Settled bets per second of one worker over preloaded input (as `settled_rate`), and the
    processor seconds the worker used until it had committed all: a figure the machine's load
    moves far less than the rate."""
    rounds = committed_total(s) - bets
    procs = [worker(s, f"{name}-0", LOGS)]
    try:
        messages = rate(s.group_id, list(s.inputs), bets + rounds, procs, LOGS)
        used = cpu_seconds(procs[0].pid)
    finally:
        stop(procs)
    return messages * bets / (bets + rounds), used


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--sizes", default="200000,2000000", help="history sizes, in events")
    parser.add_argument("--tables", type=int, default=50)
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument(
        "--takeover-state", default="on", help="on, off or on,off: the durable state of takeovers"
    )
    parser.add_argument("--bets", type=int, default=100_000, help="throughput input, in bets")
    parser.add_argument(
        "--repeats", type=int, default=2, help="throughput and latency runs of each setting"
    )
    parser.add_argument("--latency-rounds", type=int, default=10)
    parser.add_argument("--no-pipeline", action="store_true", help="takeovers only")
    parser.add_argument(
        "--one-more-round",
        action="store_true",
        help="after the catch-up, one round on every table settled before the kill",
    )
    args = parser.parse_args()
    run = Run("bench-recovery")
    sizes = [int(size) for size in args.sizes.split(",") if size]
    modes = [mode == "on" for mode in args.takeover_state.split(",")]
    lines: list[str] = []
    results = [
        takeover(n, args.tables, args.partitions, d, args.one_more_round)
        for d in modes
        for n in sizes
    ]
    figures = [f for t in results for f in takeover_figures(t)]
    for t in results:
        lines += report(t)
    for durable in modes:
        done = [t for t in results if t.durable == durable]
        if len(done) >= 2:
            ratio = done[-1].takeover_s / done[0].takeover_s
            lines.append(
                f"takeover ratio {done[-1].events:,} to {done[0].events:,} events, state "
                f"{'on' if durable else 'off'}: {ratio:.2f} (target <= 1.3; each <= 3 s)"
            )
    if not args.no_pipeline:
        more, found = pipeline(args.bets, args.partitions, args.repeats, args.latency_rounds)
        lines += more
        figures += found
    print()
    print("\n".join(lines))
    run.save(figures)


if __name__ == "__main__":
    main()
