"""`make bench-ab BASE=<git ref>`: the code at BASE (old) against this work tree (new), in one
run, taking turns (old then new, then new then old, ...), so that the machine's drift weighs on
both alike.

(a) Replay: `croupier replay --stats` of the same generated stream (tests/bench/replay.py's file,
    CROUPIER_BENCH_EVENTS events, 500,000) by both codes; the sha256 of their outputs must be
    identical (both digests printed; the run fails loudly, naming the first differing line, if
    not), and their events per second, timed inside each process around the replay.
(b) With --kafka (make bench-ab KAFKA=1): bench-kafka's croupier throughput, events decided per
    second over one preloaded floor (CROUPIER_BENCH_KAFKA_EVENTS, CROUPIER_BENCH_TABLES,
    CROUPIER_BENCH_PARTITIONS, CROUPIER_BENCH_WORKERS as bench-kafka), the old code's worker
    against the new code's, each run on the same input with a group and outputs of its own;
    after each, bench-kafka's latency of a 10,000-bet round (CROUPIER_BENCH_AB_LATENCY_ROUNDS
    rounds, 5; 0 leaves it out) by the same code's worker.

The old code is a `git worktree` of BASE under .data/ab/<sha> (made once, reused). Every process
of either code runs with this venv's Python, its working directory and PYTHONPATH the code's
checkout (croupier is installed editable from this repository, behind PYTHONPATH), and says where
its `services` package came from; a process of the old code that imported this repository's
`services` fails the run. Figures go to stdout only.

CROUPIER_BENCH_AB_REPEATS: replay runs of each side (3); CROUPIER_BENCH_AB_KAFKA_REPEATS: worker
runs of each side (2).
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import signal
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from itertools import zip_longest
from pathlib import Path

from services.settings import Settings
from tests.bench.results import Figure, Run, figure
from tests.kafka import ROOT

REPEATS = int(os.environ.get("CROUPIER_BENCH_AB_REPEATS", "3"))
KAFKA_REPEATS = int(os.environ.get("CROUPIER_BENCH_AB_KAFKA_REPEATS", "2"))
LATENCY_ROUNDS = int(os.environ.get("CROUPIER_BENCH_AB_LATENCY_ROUNDS", "5"))
AB = ROOT / ".data" / "ab"
LOGS = ROOT / "test-output" / "bench-ab"

REPLAY = (
    "import json, sys, time, services\n"
    "from services.cli import main\n"
    "began = time.perf_counter()\n"
    "code = main(['replay', '--stats', sys.argv[1]])\n"
    "sys.stdout.flush()\n"
    "took = time.perf_counter() - began\n"
    "print(json.dumps({'services': services.__file__, 'seconds': took, 'code': code}),"
    " file=sys.stderr)\n"
)
"""`croupier replay --stats FILE` of the code on PYTHONPATH, timed around the replay alone (not
the interpreter's start), saying where its `services` came from."""


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def git(*args: str, cwd: Path = ROOT) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"bench-ab: git {' '.join(args)} failed: {done.stderr.strip()}")
    return done.stdout.strip()


def worktree(base: str) -> tuple[str, Path]:
    """The commit BASE names and a worktree of it under .data/ab/<sha> (made if missing)."""
    sha = git("rev-parse", "--verify", f"{base}^{{commit}}")
    path = AB / sha
    if path.is_dir():
        there = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=path, capture_output=True, text=True
        ).stdout.strip()
        if there == sha:
            say(f"reusing the worktree of {base} ({sha[:12]}) in {path}")
            return sha, path
        raise SystemExit(
            f"bench-ab: {path} exists but is not a worktree at {sha[:12]} (it is at "
            f"{there or 'nothing'}); remove it (git worktree remove --force {path}) and retry"
        )
    AB.mkdir(parents=True, exist_ok=True)
    git("worktree", "prune")
    git("worktree", "add", "--detach", str(path), sha)
    say(f"made a worktree of {base} ({sha[:12]}) in {path}")
    return sha, path


@dataclass
class Side:
    """One code under test: its name, its checkout, and what was measured of it."""

    name: str
    code: Path
    replay_seconds: list[float] = field(default_factory=list)
    digests: set[str] = field(default_factory=set)
    imported: set[str] = field(default_factory=set)
    kafka_rates: list[float] = field(default_factory=list)
    kafka_failures: list[str] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)
    """Seconds from a 10,000-bet round's result until its 10,000 settlements were read."""

    def environment(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k != "CROUPIER_TABLE_KEYS_FILE"}
        return {**env, "PYTHONPATH": str(self.code)}

    def check_import(self, where: str) -> None:
        """Fail loudly when a process of this side ran another checkout's `services`."""
        self.imported.add(where)
        if not Path(where).resolve().is_relative_to(self.code.resolve()):
            raise SystemExit(
                f"bench-ab: the {self.name} code's process imported services from {where}, "
                f"not from {self.code}: the comparison would be void"
            )


def in_turns(sides: tuple[Side, Side], runs: int) -> list[tuple[int, Side]]:
    """(run, side) in the order they run: old then new, then new then old, ..."""
    order: list[tuple[int, Side]] = []
    for n in range(runs):
        order.extend((n, side) for side in (sides if n % 2 == 0 else sides[::-1]))
    return order


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        while block := stream.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def replay_once(side: Side, stream: Path, out: Path) -> None:
    with open(out, "wb") as sink:
        done = subprocess.run(
            [sys.executable, "-c", REPLAY, str(stream)],
            cwd=side.code,
            env=side.environment(),
            stdout=sink,
            stderr=subprocess.PIPE,
        )
    said = done.stderr.decode(errors="replace").strip().splitlines()
    if done.returncode != 0 or not said:
        raise SystemExit(
            f"bench-ab: the {side.name} code's replay failed (exit {done.returncode}):\n"
            + "\n".join(said[-20:])
        )
    result = json.loads(said[-1])
    if result["code"] != 0:
        raise SystemExit(f"bench-ab: the {side.name} code's replay exited {result['code']}")
    side.check_import(result["services"])
    side.replay_seconds.append(result["seconds"])
    side.digests.add(sha256(out))


def first_difference(a: Path, b: Path) -> str:
    with open(a, "rb") as left, open(b, "rb") as right:
        for n, (x, y) in enumerate(zip_longest(left, right), start=1):
            if x != y:
                return f"line {n}:\n  old {_shown(x)}\n  new {_shown(y)}"
    return "none found"


def _shown(line: bytes | None) -> str:
    return "(the output ended before)" if line is None else repr(line[:300])


def replay_ab(sides: tuple[Side, Side]) -> tuple[Path, int]:
    """(a): both codes replay the same stream; the outputs' digests must be identical."""
    os.environ.setdefault("CROUPIER_BENCH_DIR", str(ROOT / ".data" / "bench"))
    from tests.bench.replay import stream_file

    stream = stream_file().resolve()
    with open(stream, "rb") as lines:
        events = sum(1 for line in lines if line.strip())
    say(f"replay A/B on {stream} ({events:,} events), {REPEATS} run(s) of each side")
    outs = {side.name: AB / f"out-{side.name}.jsonl" for side in sides}
    for n, side in in_turns(sides, REPEATS):
        replay_once(side, stream, outs[side.name])
        say(
            f"  {side.name} run {n + 1}/{REPEATS}: {side.replay_seconds[-1]:.3f} s,"
            f" {events / side.replay_seconds[-1]:,.0f} events/s"
        )
    old, new = sides
    digests = [*old.digests, *new.digests]
    if len(old.digests) != 1 or len(new.digests) != 1 or old.digests != new.digests:
        print(f"old output sha256: {', '.join(sorted(old.digests))}")
        print(f"new output sha256: {', '.join(sorted(new.digests))}")
        print(
            "!!! THE OLD AND NEW CODE REPLAY THE SAME STREAM TO DIFFERENT OUTPUTS !!!\n"
            f"first difference, {first_difference(outs['old'], outs['new'])}\n"
            f"(both outputs kept: {outs['old']} and {outs['new']})",
            flush=True,
        )
        raise SystemExit(1)
    say(f"  outputs identical, sha256 {digests[0]}")
    for out in outs.values():
        out.unlink()
    return stream, events


def kafka_ab(sides: tuple[Side, Side]) -> tuple[int, int]:
    """(b): bench-kafka's croupier throughput, the old code's worker against the new code's."""
    from services.topics import ensure
    from tests.bench.kafka import EVENTS, PARTITIONS, TABLES, WORKERS, delete_bench_topics
    from tests.bench.pipeline import (
        BOOTSTRAP,
        events_rate,
        imported_from,
        latency,
        preload_floor,
        variant,
    )
    from tests.kafka import isolated_settings

    s = isolated_settings(BOOTSTRAP, partitions=PARTITIONS)
    ensure(s, io.StringIO())
    say(
        f"kafka A/B: topics prefix {s.topic_rounds.removesuffix('-rounds')}, {PARTITIONS}"
        f" partitions, {WORKERS} worker(s), {TABLES} tables, about {EVENTS:,} events,"
        f" {KAFKA_REPEATS} run(s) of each side"
    )
    fresh: list[Settings] = []
    try:
        rounds, bets = preload_floor(s, EVENTS, tables=TABLES)
        for n, side in in_turns(sides, KAFKA_REPEATS):
            tag = f"{side.name}{n}"
            run = variant(s, tag)
            ensure(run, io.StringIO())
            name = f"ab-{tag}"
            try:
                side.kafka_rates.append(events_rate(run, WORKERS, LOGS, name, code=side.code))
                say(
                    f"  {side.name} run {n + 1}/{KAFKA_REPEATS}: {side.kafka_rates[-1]:,.0f} events/s"
                )
            except (RuntimeError, TimeoutError) as error:
                side.kafka_failures.append(str(error))
                say(f"  {side.name} run {n + 1}/{KAFKA_REPEATS} failed: {error}")
            for w in range(WORKERS):
                side.check_import(imported_from(LOGS / f"{name}-{w}.log"))
            if LATENCY_ROUNDS:  # on inputs of their own, as bench-kafka's latency
                slow = isolated_settings(BOOTSTRAP, partitions=PARTITIONS)
                fresh.append(slow)
                ensure(slow, io.StringIO())
                _, times = latency(slow, LATENCY_ROUNDS, 1, LOGS, f"ab-{tag}l", code=side.code)
                side.latencies.extend(times)
                side.check_import(imported_from(LOGS / f"ab-{tag}l-0.log"))
    finally:
        if os.environ.get("CROUPIER_BENCH_KEEP", "") in ("", "0"):
            delete_bench_topics(s, *fresh)
    return rounds, bets


def table(
    base: str,
    sha: str,
    sides: tuple[Side, Side],
    replayed: tuple[Path, int] | None,
    floor: tuple[int, int] | None,
) -> None:
    old, new = sides
    dirty = git("status", "--porcelain", "--untracked-files=no")
    changed = len(dirty.splitlines())
    print(
        f"\nA/B: old = {base} ({sha[:12]}, worktree {old.code}); new = this work tree "
        f"({git('rev-parse', '--short=12', 'HEAD')}"
        + (f" with {changed} file(s) changed, not committed)" if changed else ", clean)")
    )
    print(f"  {'':46}{'old':>14}{'new':>14}{'new/old':>10}")

    def row(label: str, a: float, b: float) -> None:
        print(f"  {label:46}{a:>14,.0f}{b:>14,.0f}{b / a:>10.2f}")

    if replayed is not None:
        stream, events = replayed
        print(f"  replay of {stream.name} ({events:,} events), runs in turns: {REPEATS} each")
        row(
            "  events/s, best run",
            events / min(old.replay_seconds),
            events / min(new.replay_seconds),
        )
        row(
            "  events/s, median run",
            events / statistics.median(old.replay_seconds),
            events / statistics.median(new.replay_seconds),
        )
        print(
            f"    {'each run, s':44}"
            + "  ".join(
                f"{side.name} " + ", ".join(f"{t:.2f}" for t in side.replay_seconds)
                for side in sides
            )
        )
        digest = next(iter(old.digests))
        print(f"    output sha256 old {next(iter(old.digests))}")
        print(f"    output sha256 new {next(iter(new.digests))}")
        print(f"    {'identical' if old.digests == new.digests else 'DIFFERENT'} ({digest[:12]})")
    if floor is not None:
        rounds, bets = floor
        print(
            f"  croupier worker on one preloaded floor ({rounds + bets:,} events), "
            f"runs in turns: {KAFKA_REPEATS} each"
        )
        if old.kafka_rates and new.kafka_rates:
            row(
                "  events decided/s, median run",
                statistics.median(old.kafka_rates),
                statistics.median(new.kafka_rates),
            )
            row("  events decided/s, best run", max(old.kafka_rates), max(new.kafka_rates))
        for side in sides:
            runs = ", ".join(f"{r:,.0f}" for r in side.kafka_rates) or "none"
            failed = (
                f"; {len(side.kafka_failures)} failed: {side.kafka_failures[0]}"
                if side.kafka_failures
                else ""
            )
            print(f"    {side.name} runs (events/s): {runs}{failed}")
        if old.latencies and new.latencies:
            print(
                f"  a 10,000-bet round, result to its settlements read: {LATENCY_ROUNDS} each run"
            )
            row("  p50, ms", median_ms(old.latencies), median_ms(new.latencies))
            row("  p99, ms", p99_ms(old.latencies), p99_ms(new.latencies))
    for side in sides:
        print(f"  {side.name} code's services imported from {', '.join(sorted(side.imported))}")
    print(
        f"  load average at the end {os.getloadavg()[0]:.2f} (other work on the machine skews both)"
    )


def figures(
    base: str,
    sides: tuple[Side, Side],
    replayed: tuple[Path, int] | None,
    floor: tuple[int, int] | None,
) -> list[Figure]:
    """The new code's medians against the old's, for the result file."""
    old, new = sides
    found: list[Figure] = []
    if replayed is not None:
        stream, events = replayed
        same = "identical" if old.digests == new.digests else "DIFFERENT"
        found.append(
            figure(
                "replay",
                f"replay of {stream.name} ({events:,} events), this code, median of {REPEATS}"
                " runs in turns",
                events / statistics.median(new.replay_seconds),
                "events/s",
                baseline=(f"the code of {base}", events / statistics.median(old.replay_seconds)),
                note=f"output sha256 {same} ({next(iter(new.digests))[:12]})",
            )
        )
    if floor is not None and old.kafka_rates and new.kafka_rates:
        found.append(
            figure(
                "worker",
                f"worker, events decided/s over one preloaded floor ({sum(floor):,} events), "
                f"this code, median of {KAFKA_REPEATS} runs in turns",
                statistics.median(new.kafka_rates),
                "events/s",
                baseline=(f"the code of {base}", statistics.median(old.kafka_rates)),
            )
        )
    if old.latencies and new.latencies:
        rounds_of = f"{len(new.latencies)} rounds of 10,000 bets in {KAFKA_REPEATS} runs in turns"
        for name, of in (("p50", median_ms), ("p99", p99_ms)):
            found.append(
                figure(
                    f"round_read_{name}",
                    f"round.result to the last of its 10,000 settlements read, {name} of "
                    f"{rounds_of}, this code",
                    of(new.latencies),
                    "ms",
                    baseline=(f"the code of {base}", of(old.latencies)),
                )
            )
    return found


def median_ms(seconds: list[float]) -> float:
    return statistics.median(seconds) * 1000


def p99_ms(seconds: list[float]) -> float:
    from tests.bench.pipeline import p99

    return p99(sorted(seconds)) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(
        prog="python -m tests.bench.ab", description=__doc__.split("\n")[0]
    )
    parser.add_argument("base", help="the git ref of the old code (this work tree is the new)")
    parser.add_argument("--kafka", action="store_true", help="also the worker on the local broker")
    parser.add_argument("--no-replay", action="store_true", help="leave the replay A/B out")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    run = Run("bench-ab")
    sha, path = worktree(args.base)
    sides = (Side("old", path), Side("new", ROOT))
    began = time.monotonic()
    replayed = None if args.no_replay else replay_ab(sides)
    floor = kafka_ab(sides) if args.kafka else None
    table(args.base, sha, sides, replayed, floor)
    run.save(figures(f"{args.base} ({sha[:10]})", sides, replayed, floor))
    say(f"bench-ab took {time.monotonic() - began:.0f} s")
    if any(side.kafka_failures for side in sides):
        raise SystemExit(1)


if __name__ == "__main__":
    main()
