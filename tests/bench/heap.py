"""`make bench-heap`: how much memory a worker gets back when tasks leave it, with CPython's small
object allocator (pymalloc, what the worker runs) and with glibc's for every object
(`PYTHONMALLOC=malloc`), each side in a process of its own, and what each costs the fold.

A worker that took over another's tasks holds their state beside its own; both grow together
while it holds them, so their small objects share the allocator's arenas. When the tasks leave,
their state is freed and the C heap trimmed (`heap.release`); what stays resident is what the
allocator cannot give back. Each side: fold TABLES tables of a task that stays and of one that
will leave, interleaved batch by batch, for ROUNDS rounds a table; drop the leaving one, trim,
and read the resident memory at each step; the fold's processor time an event is timed too.

    python -m tests.bench.heap          # both sides, then the figures (benchmarks/results/)
    python -m tests.bench.heap --side   # one side, in this process, its figures as JSON
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

from services import heap
from services.settlement.fold import Fold
from services.simulation.streams import CLEAN, Profile, generate
from tests.bench.replay_memory import rss_mib
from tests.bench.results import Run, figure

TABLES = 40
ROUNDS = int(os.environ.get("CROUPIER_BENCH_HEAP_ROUNDS", "240"))
"""Rounds a table of each task: past the fold's horizon (200), so that the state is full."""
SIDES = {"pymalloc": {}, "malloc": {"PYTHONMALLOC": "malloc"}}


def side() -> dict[str, float]:
    """One side's figures: resident MiB with both tasks, after the leaving one is dropped and
    the heap trimmed, and of the staying task alone; the fold's processor time an event (us)."""
    profile = Profile(**{**CLEAN.__dict__, "bets_per_round": (50, 150)})
    staying, leaving = Fold(), Fold()
    events = 0
    cpu = 0.0

    def feed(fold: Fold, seed: int, batch: int) -> None:
        nonlocal events, cpu
        streams = generate(seed, tables=TABLES, rounds=2, profile=profile, first_round=batch * 2)
        started = time.process_time()
        for raw in streams.rounds:
            fold.feed("rounds", raw)
        for raw in streams.bets:
            fold.feed("bets", raw)
        cpu += time.process_time() - started
        events += len(streams.rounds) + len(streams.bets)

    for batch in range(ROUNDS // 2):
        feed(staying, batch, batch)
        feed(leaving, 100_000 + batch, batch)
    both = rss_mib()
    del leaving
    heap.release()
    left = rss_mib()
    return {"both": both, "left": left, "us_an_event": cpu / events * 1e6}


def main() -> None:
    if sys.argv[1:] == ["--side"]:
        print(json.dumps(side()))
        return
    run = Run("bench-heap")
    found: dict[str, dict[str, float]] = {}
    for name, env in SIDES.items():
        print(
            f"{name}: folding two tasks of {TABLES} tables, {ROUNDS} rounds a table ...", flush=True
        )
        out = subprocess.run(
            [sys.executable, "-m", "tests.bench.heap", "--side"],
            env={**os.environ, **env},
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        found[name] = json.loads(out.splitlines()[-1])
        f = found[name]
        print(
            f"  both tasks {f['both']:.0f} MiB; the leaving one dropped, heap trimmed: "
            f"{f['left']:.0f} MiB ({f['both'] - f['left']:.0f} MiB given back); "
            f"fold {f['us_an_event']:.2f} us an event",
            flush=True,
        )
    ours, theirs = found["pymalloc"], found["malloc"]
    run.save(
        [
            figure(
                "given_back",
                "resident memory given back when a task of two leaves (pymalloc, the worker's)",
                ours["both"] - ours["left"],
                "MiB",
                baseline=("glibc malloc for every object", theirs["both"] - theirs["left"]),
            ),
            figure(
                "both_tasks",
                "resident memory holding both tasks (pymalloc)",
                ours["both"],
                "MiB",
                baseline=("glibc malloc for every object", theirs["both"]),
            ),
            figure(
                "fold_time_an_event",
                "the fold's processor time an event (pymalloc)",
                ours["us_an_event"],
                "us",
                baseline=("glibc malloc for every object", theirs["us_an_event"]),
            ),
        ]
    )


if __name__ == "__main__":
    main()
