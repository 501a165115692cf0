"""The result files of the benchmarks: `benchmarks/results/<bench>.json`, one current file per
benchmark, overwritten by its next run and committed with the code it measured.

A file holds the benchmark's figures as named fields with units, each with its baseline measured
in the same run where it has one and the target it is held to where one is set, and what is
needed to judge them: the machine (cores, processor model, memory, load average at the start and
at the end), the date and time (UTC), the commit (and whether the work tree differed from it) and
the command. docs/BENCHMARKS.md's current figures are generated from these files
(`python -m tests.bench.report`).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

import msgspec

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results"
CODE = ("services", "schemas", "tests", "pyproject.toml", "constraints.txt", "Makefile")
"""What a benchmark measures: a change to these, not yet committed, marks its result `dirty`
(documents and result files do not)."""


class Target(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The bound a figure is held to: its value's, or its ratio to its baseline's."""

    of: Literal["value", "ratio"]
    bound: Literal["at least", "at most"]
    limit: float


class Baseline(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """What the figure is compared with, measured in the same run, in the figure's unit."""

    label: str
    value: float


class Figure(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One measured figure. The ratio, where there is a baseline, is value / baseline (for a
    time, where less is better, the baseline's over the value: above 1 is faster either way)."""

    name: str
    label: str
    value: float
    unit: str
    baseline: Baseline | None = None
    target: Target | None = None
    note: str = ""

    @property
    def ratio(self) -> float | None:
        if self.baseline is None or not self.value or not self.baseline.value:
            return None
        if lower_is_better(self.unit):
            return self.baseline.value / self.value
        return self.value / self.baseline.value


class Machine(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    cores: int
    model: str
    memory_mib: int
    load_start: tuple[float, float, float] | None
    """The load average over 1, 5 and 15 minutes; None where it was not recorded."""
    load_end: tuple[float, float, float] | None


class Result(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One benchmark's current result file."""

    bench: str
    command: str
    started: str
    finished: str
    commit: str
    dirty: bool
    machine: Machine
    figures: tuple[Figure, ...]
    notes: tuple[str, ...] = ()
    source: str = "run"
    """"run" for a file this module wrote at the end of a run; otherwise where the figures were
    taken from (transcribed from a dated entry of the benchmarks' history)."""


def lower_is_better(unit: str) -> bool:
    return unit in ("s", "ms", "us", "MiB", "us/bet", "us/row")


def figure(
    name: str,
    label: str,
    value: float,
    unit: str,
    *,
    baseline: tuple[str, float] | None = None,
    target: tuple[Literal["value", "ratio"], Literal["at least", "at most"], float] | None = None,
    note: str = "",
) -> Figure:
    """A figure, its baseline given as (label, value) and its target as (of, bound, limit)."""
    return Figure(
        name=name,
        label=label,
        value=round(value, 4),
        unit=unit,
        baseline=None if baseline is None else Baseline(baseline[0], round(baseline[1], 4)),
        target=None if target is None else Target(*target),
        note=note,
    )


def loadavg() -> tuple[float, float, float]:
    one, five, fifteen = (round(load, 2) for load in os.getloadavg())
    return (one, five, fifteen)


class Run:
    """A benchmark's run: started when made (the start's load average and time), saved at its
    end with its figures."""

    def __init__(self, bench: str) -> None:
        self.bench = bench
        self.started = now()
        self.load_start = loadavg()

    def save(
        self, figures: list[Figure], notes: Sequence[str] = (), directory: Path = RESULTS
    ) -> Path:
        result = Result(
            bench=self.bench,
            command=command(),
            started=self.started,
            finished=now(),
            commit=git("rev-parse", "HEAD"),
            dirty=bool(git("status", "--porcelain", "--untracked-files=no", "--", *CODE)),
            machine=machine(self.load_start, loadavg()),
            figures=tuple(figures),
            notes=tuple(notes),
        )
        return write(result, directory)


def write(result: Result, directory: Path = RESULTS) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{result.bench}.json"
    path.write_bytes(msgspec.json.format(msgspec.json.encode(result), indent=2) + b"\n")
    print(f"results saved to {path}", file=sys.stderr, flush=True)
    return path


def load(path: Path) -> Result:
    return msgspec.json.decode(path.read_bytes(), type=Result)


def load_all(directory: Path = RESULTS) -> list[Result]:
    return [load(path) for path in sorted(directory.glob("*.json"))]


def now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def command() -> str:
    """The command that ran the benchmark, as it could be typed again."""
    module = sys.modules["__main__"].__spec__
    program = f"python -m {module.name}" if module is not None else f"python {sys.argv[0]}"
    env = " ".join(
        f"{key}={value}"
        for key, value in sorted(os.environ.items())
        if key.startswith("CROUPIER_BENCH_") or key == "KAFKA_BOOTSTRAP"
    )
    return " ".join(part for part in (env, program, *sys.argv[1:]) if part)


def git(*args: str) -> str:
    done = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=False)
    return done.stdout.strip() if done.returncode == 0 else "unknown"


def machine(
    load_start: tuple[float, float, float] | None, load_end: tuple[float, float, float] | None
) -> Machine:
    model = "unknown"
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            model = line.split(":", 1)[1].strip()
            break
    memory = 0
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            memory = int(line.split()[1]) // 1024
    return Machine(
        cores=os.cpu_count() or 0,
        model=model,
        memory_mib=memory,
        load_start=load_start,
        load_end=load_end,
    )
