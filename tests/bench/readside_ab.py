"""`make bench-readside CROUPIER_BENCH_READSIDE_BASE=<git ref>`: the read side of the code at that
ref (old) against this work tree's (new), in one run over the same settled outputs.

The bets are published and settled once (tests/bench/readside.py's step 1, by this work tree's
workers). Then each side in turn (old, new, new, old, ...: `CROUPIER_BENCH_READSIDE_AB_REPEATS`
turns of each, 2) runs steps 2 to 4 on databases of its own: `CROUPIER_BENCH_PROJECTORS`
projectors of its code into a fresh database made by its own migrations (bets/s, processor time a
bet of the projectors and of PostgreSQL, the projectors' largest resident memory), three restarts
to caught up on that database and three on an empty one over empty topics, and the queries over
HTTP to its own API (`croupier api --serve-only`) right after the projection and after
`VACUUM (ANALYZE)`. Both APIs check tokens (the old code's access control is the same:
`CROUPIER_API_JWKS_FILE`), so every request carries one on both sides.

The old code is a worktree of the ref under .data/ab (tests/bench/ab.py's, made once and reused);
its processes run this venv's Python in that checkout with it first on PYTHONPATH, and a process
of either side that imported the other's `services` fails the run. A group of queries that fails
on one side (a request answered other than 200) is printed as failed and the run goes on. The
figures: this work tree's, each with the old code's as its baseline, held to a ratio of at least
0.95 (within 5%, the ratio above 1 when the new code does better), in
benchmarks/results/bench-readside-ab.json.
"""

from __future__ import annotations

import os
import statistics
from dataclasses import dataclass, field
from typing import Any

from services.settings import Settings
from tests.bench.ab import Side, git, in_turns, worktree
from tests.bench.readside import (
    BETS,
    PARTITIONS,
    PROJECTORS,
    ROOT,
    WORKERS,
    project,
    queries,
    quiesce,
    restart,
    say,
    settle,
    settled_pipeline,
)
from tests.bench.readside_figures import p99_ms
from tests.bench.results import Figure, Run, figure, loadavg
from tests.database import fresh_url
from tests.kafka import create_topics

REPEATS = int(os.environ.get("CROUPIER_BENCH_READSIDE_AB_REPEATS", "2"))
WITHIN = 0.95
"""The ratio each figure is held to: the new code within 5% of the old (or better)."""
GROUPS = ("history first page", "history page by cursor", "round recall", "report")


@dataclass
class Turn:
    """What one side measured in one turn."""

    projected: dict[str, Any]
    restarts_full: list[float]
    restarts_empty: list[float]
    answers: dict[str, str]
    answer_times: dict[str, list[float]]
    settled: dict[str, str]
    settled_times: dict[str, list[float]]
    settled_in: float
    load: tuple[tuple[float, float, float], tuple[float, float, float]]


@dataclass
class Measured:
    side: Side
    turns: list[Turn] = field(default_factory=list)

    def rates(self) -> list[float]:
        return [t.projected["bets_per_s"] for t in self.turns]

    def cpu(self) -> list[float]:
        """µs a bet of the projectors and of PostgreSQL, each turn."""
        return [sum(t.projected["cpu_us"][:2]) for t in self.turns]

    def kafka_cpu(self) -> list[float]:
        return [t.projected["cpu_us"][2] for t in self.turns]

    def rss(self) -> list[float]:
        """The projectors' largest resident memory over each turn (MiB)."""
        return [max([*t.projected["rss"].values(), t.projected["rss_end"]]) for t in self.turns]

    def restarts(self, full: bool) -> list[float]:
        return [s for t in self.turns for s in (t.restarts_full if full else t.restarts_empty)]

    def times(self, group: str, settled: bool) -> list[float] | None:
        """Every turn's times of a group of queries, pooled; None when it failed in a turn."""
        pooled: list[float] = []
        for t in self.turns:
            times = t.settled_times if settled else t.answer_times
            named = [took for name, took in times.items() if name.startswith(group)]
            if not named:
                return None
            pooled.extend(named[0])
        return pooled

    def failures(self) -> list[str]:
        return [
            f"{name}: {figure}"
            for t in self.turns
            for name, figure in (*t.answers.items(), *t.settled.items())
            if figure.startswith("FAILED")
        ]


def one_turn(s: Settings, empty: Settings, side: Side, bets: int, big_round: str) -> Turn:
    began = loadavg()
    with fresh_url("postgresql", ROOT / "test-output") as full:
        quiesce()
        say(f"  the {side.name} code's projectors ({PROJECTORS}) ...")
        projected = project(s, full, bets, shards=PROJECTORS, side=side)
        say(
            f"  {side.name}: {projected['bets_per_s']:,.0f} bets/s, "
            f"{sum(projected['cpu_us'][:2]):.1f} us a bet (projectors and PostgreSQL)"
        )
        restarts_full = [restart(s, full, side)[0] for _ in range(3)]
        with fresh_url("postgresql", ROOT / "test-output") as nothing:
            restarts_empty = [restart(empty, nothing, side)[0] for _ in range(3)]
        say(f"  {side.name}: queries right after the projection ...")
        answers, answer_times = queries(s, full, big_round, side)
        settled_in = settle(full)
        say(f"  {side.name}: settled in {settled_in:.0f} s; queries again ...")
        settled, settled_times = queries(s, full, big_round, side)
    return Turn(
        projected=projected,
        restarts_full=restarts_full,
        restarts_empty=restarts_empty,
        answers=answers,
        answer_times=answer_times,
        settled=settled,
        settled_times=settled_times,
        settled_in=settled_in,
        load=(began, loadavg()),
    )


def measure_ab(base: str, s: Settings, empty: Settings, saving: Run) -> int:
    sha, path = worktree(base)
    old, new = Measured(Side("old", path)), Measured(Side("new", ROOT))
    by_name = {"old": old, "new": new}
    bets, events, big_round, pipeline, pipeline_us = settled_pipeline(s)
    create_topics(empty)
    order = in_turns((old.side, new.side), REPEATS)
    for n, (_, side) in enumerate(order):
        say(f"turn {n + 1}/{len(order)}: the {side.name} code (load {os.getloadavg()[0]:.2f})")
        by_name[side.name].turns.append(one_turn(s, empty, side, bets, big_round))
    label = f"the code of {base} ({sha[:10]})"
    rows = comparison(old, new)
    print(
        f"bets: {bets:,} ({events:,} round events), {PARTITIONS} partitions, {WORKERS} worker(s); "
        f"pipeline {pipeline:,.0f} settled bets/s, {sum(pipeline_us):.1f} us a bet"
    )
    head = git("rev-parse", "--short=10", "HEAD")
    print(
        f"old = {base} ({sha[:10]}, worktree {path}); new = this work tree ({head}); turns: "
        + ", ".join(side.name for _, side in order)
    )
    print(f"  {'figure':58}{'old':>12}{'new':>12}{'new/old':>9}  within 5%")
    for name, unit, old_value, new_value, _, _ in rows:
        if old_value is None or new_value is None:
            print(f"  {name + ', ' + unit:58}{_cell(old_value):>12}{_cell(new_value):>12}")
            continue
        ratio = new_value / old_value
        print(
            f"  {name + ', ' + unit:58}{_cell(old_value):>12}{_cell(new_value):>12}"
            f"{ratio:>9.2f}  {'yes' if within(unit, ratio) else 'NO'}"
        )
    for m in (old, new):
        m.side.imported.discard("")
        print(
            f"  {m.side.name}, each turn: bets/s "
            + ", ".join(f"{r:,.0f}" for r in m.rates())
            + "; us a bet "
            + ", ".join(f"{c:.1f}" for c in m.cpu())
            + " (Kafka "
            + ", ".join(f"{c:.1f}" for c in m.kafka_cpu())
            + "); RSS at 1,000,000 / at the end "
            + ", ".join(
                f"{t.projected['rss'].get(1, 0):.0f} / {t.projected['rss_end']:.0f} MiB"
                for t in m.turns
            )
            + "; restart full "
            + ", ".join(f"{r:.2f}" for r in m.restarts(True))
            + " s, empty "
            + ", ".join(f"{r:.2f}" for r in m.restarts(False))
            + " s; load at each turn's start "
            + ", ".join(f"{t.load[0][0]:.2f}" for t in m.turns)
        )
        for n, t in enumerate(m.turns):
            for when, said in (("after the projection", t.answers), ("after VACUUM", t.settled)):
                print(f"    {m.side.name} turn {n + 1}, {when}:")
                for name, text in said.items():
                    print(f"      {name + ':':<36}{text}")
        print(f"  {m.side.name} code's services imported from {', '.join(sorted(m.side.imported))}")
    print(f"  load average at the end {' '.join(f'{x:.2f}' for x in loadavg())}")
    notes = [
        f"{BETS:,} bets published and settled once by this work tree's workers (the pipeline "
        f"{pipeline:,.0f} settled bets/s); then each side's {PROJECTORS} projectors, restarts and "
        f"API over those same outputs, on databases of its own, in turns: "
        + ", ".join(side.name for _, side in order),
        *(f"{m.side.name} code, failed: {failure}" for m in (old, new) for failure in m.failures()),
    ]
    saving.save(figures(rows, label), notes)
    return 0


Row = tuple[str, str, float | None, float | None, str, str]
"""(label, unit, old, new, name, how: median of the turns or pooled)."""


def comparison(old: Measured, new: Measured) -> list[Row]:
    def median(values: list[float]) -> float | None:
        return statistics.median(values) if values else None

    turns = f"median of {REPEATS} turns"
    rows: list[Row] = [
        (
            f"{PROJECTORS} projectors, bets projected/s",
            "bets/s",
            median(old.rates()),
            median(new.rates()),
            "rate",
            turns,
        ),
        (
            f"{PROJECTORS} projectors, processor time a bet (projectors, PostgreSQL)",
            "us/bet",
            median(old.cpu()),
            median(new.cpu()),
            "cpu",
            turns,
        ),
        (
            f"{PROJECTORS} projectors' largest resident memory",
            "MiB",
            median(old.rss()),
            median(new.rss()),
            "rss",
            turns,
        ),
        (
            "restart to caught up, full database",
            "s",
            median(old.restarts(True)),
            median(new.restarts(True)),
            "restart",
            f"median of {3 * REPEATS}",
        ),
        (
            "restart to caught up, empty database",
            "s",
            median(old.restarts(False)),
            median(new.restarts(False)),
            "restart_empty",
            f"median of {3 * REPEATS}",
        ),
    ]
    for settled in (False, True):
        when = "after VACUUM" if settled else "right after the projection"
        for group in GROUPS:
            a, b = old.times(group, settled), new.times(group, settled)
            rows.append(
                (
                    f"{group}, p99 over HTTP, {when}",
                    "ms",
                    p99_ms(a) if a else None,
                    p99_ms(b) if b else None,
                    f"{group.replace(' ', '_')}_p99_{'settled' if settled else 'after'}",
                    f"{REPEATS} turns' requests pooled",
                )
            )
    return rows


def within(unit: str, ratio: float) -> bool:
    """new/old within 5%: no lower for a rate, no higher for a time or memory."""
    return ratio >= WITHIN if unit == "bets/s" else ratio <= 1 / WITHIN


def _cell(value: float | None) -> str:
    if value is None:
        return "failed"
    return f"{value:,.0f}" if value >= 100 else f"{value:.2f}"


def figures(rows: list[Row], label: str) -> list[Figure]:
    found: list[Figure] = []
    for text, unit, old_value, new_value, name, how in rows:
        if new_value is None:
            continue
        found.append(
            figure(
                name,
                f"{text}, this work tree, {how}",
                new_value,
                unit,
                baseline=None if old_value is None else (label, old_value),
                target=None if old_value is None else ("ratio", "at least", WITHIN),
                note="" if old_value is not None else "the old code's failed",
            )
        )
    return found
