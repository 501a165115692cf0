"""The soak's figures over the run: a table, a verdict on flatness, and a PNG (matplotlib, Agg).

Flat: the mean of a figure in the last WINDOW seconds is at most 10% above its mean in the first
WINDOW seconds after the warm-up (falling is flat too). PostgreSQL's tables are reported, not
judged: the read side keeps every bet (no retention), so they grow with the bets.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from tests.soak.faults import Outcome
from tests.soak.watch import Sample

FLAT = 1.10
MIB = 1024 * 1024


@dataclass(frozen=True, kw_only=True)
class Series:
    name: str
    unit: str
    points: list[tuple[float, float]]
    judged: bool = True
    floor: float = 0.0
    """An absolute difference below which the figure counts as flat (noise of small numbers)."""
    why: str = ""
    """Why a figure is not judged."""
    after: float = 0.0
    """Seconds into the run from which the figure can be steady: its first window starts there
    (at the warm-up's end at the earliest)."""


def series(
    samples: Sequence[Sample],
    latencies: Sequence[tuple[float, float]],
    bucket: float,
    full: float = 0.0,
    faults: Sequence[tuple[float, float]] = (),
) -> list[Series]:
    """The figures of the run; `full`: seconds into the run when the fold's state is full (its
    horizon of decided rounds a table reached), from which the workers' memory can be steady,
    and the state topic's bytes 10 minutes later (its segments close every 10 minutes,
    services/topics.py, before they are compacted)."""
    filling = "the fold's state grows until its horizon of decided rounds a table is full"

    def of(get: Callable[[Sample], float | None]) -> list[tuple[float, float]]:
        return [(s.t, v) for s in samples if (v := get(s)) is not None]

    def worker_max(s: Sample) -> float | None:
        known = [r for r in s.workers_rss if r is not None]
        return max(known) / MIB if known else None

    def tables(s: Sample) -> float | None:
        return None if s.tables_bytes is None else sum(s.tables_bytes.values()) / MIB

    return [
        Series(
            name="worker RSS (largest)",
            unit="MiB",
            points=of(worker_max),
            floor=8.0,
            after=full,
            why=filling,
        ),
        Series(
            name="read side RSS (projectors + API)",
            unit="MiB",
            points=of(lambda s: None if s.readside_rss is None else s.readside_rss / MIB),
            floor=8.0,
        ),
        Series(
            name="state topic bytes",
            unit="MiB",
            points=of(lambda s: s.state_bytes / MIB),
            floor=1.0,
            after=full + 600,
            why=f"{filling}, and its segments are compacted 10 minutes later",
        ),
        Series(
            name="PostgreSQL tables",
            unit="MiB",
            points=of(tables),
            judged=False,
            why="the read side keeps every bet",
        ),
        Series(
            name="node 3 log directory (tmpfs)",
            unit="MiB",
            points=of(lambda s: None if s.small_used is None else s.small_used / MIB),
            judged=False,
            why="a ballast fills it",
        ),
        Series(
            name="consumer lag",
            unit="messages",
            points=of(lambda s: None if s.lag is None else float(s.lag)),
            floor=1000.0,
        ),
        Series(
            name="settlement latency p99, outside faults",
            unit="s",
            points=p99s([x for x in latencies if not _inside(x[0], faults)], bucket),
            floor=0.5,
            why="the faults leave too little time between them",
        ),
        Series(
            name="settlement latency p99",
            unit="s",
            points=p99s(latencies, bucket),
            judged=False,
            why="the faults' stalls",
        ),
    ]


def _inside(at: float, spans: Sequence[tuple[float, float]]) -> bool:
    return any(start <= at <= end for start, end in spans)


def p99s(latencies: Sequence[tuple[float, float]], bucket: float) -> list[tuple[float, float]]:
    """The 99th percentile of the latencies of each `bucket` seconds, at the bucket's middle."""
    by: dict[int, list[float]] = {}
    for at, latency in latencies:
        by.setdefault(int(at // bucket), []).append(latency)
    return [
        (
            (n + 0.5) * bucket,
            statistics.quantiles(v, n=100, method="inclusive")[98] if len(v) > 1 else v[0],
        )
        for n, v in sorted(by.items())
    ]


@dataclass(frozen=True, kw_only=True)
class Judged:
    name: str
    unit: str
    first: float | None
    last: float | None
    peak: float | None
    verdict: str


SHORTEST = 120.0
"""Seconds a window must last at least for a figure to be judged."""


def judge(all_series: list[Series], warmup: float, end: float, window: float) -> list[Judged]:
    """Each figure's first window after the warm-up (or after it can be steady) against its last,
    each of `window` seconds at most and half of what is left at least."""
    found = []
    for s in all_series:
        start = max(warmup, s.after)
        width = min(window, (end - start) / 2)
        first = _mean(s.points, start, start + width)
        last = _mean(s.points, end - width, end)
        peak = max((v for _, v in s.points), default=None)
        if first is None or last is None or width < SHORTEST:
            rate = _rate(s.points, warmup, end)
            head = "too few points" if rate is None else f"{rate:+.2f} {s.unit}/min"
            why = s.why or "too short a run"
            if s.judged and s.after > warmup:
                why = f"steady only after {start / 60:.0f} min ({why})"
            verdict = f"{head}, not judged: {why}"
        elif not s.judged:
            rate = (last - first) / max((end - start - width) / 60, 1e-9)
            verdict = f"{rate:+.2f} {s.unit}/min, not judged: {s.why}"
        elif last <= first * FLAT or last - first <= s.floor:
            verdict = "flat"
        else:
            verdict = f"GROWS {100 * (last / first - 1) if first else float('inf'):+.0f}%"
        found.append(
            Judged(name=s.name, unit=s.unit, first=first, last=last, peak=peak, verdict=verdict)
        )
    return found


def _rate(points: list[tuple[float, float]], start: float, end: float) -> float | None:
    """Change a minute from `start` to `end`, from the points nearest each."""
    inside = [(t, v) for t, v in points if start <= t <= end]
    if len(inside) < 2 or inside[-1][0] == inside[0][0]:
        return None
    return (inside[-1][1] - inside[0][1]) / ((inside[-1][0] - inside[0][0]) / 60)


def _mean(points: list[tuple[float, float]], start: float, end: float) -> float | None:
    inside = [v for t, v in points if start <= t <= end]
    return statistics.fmean(inside) if inside else None


def table(judged: list[Judged], outcomes: list[Outcome]) -> str:
    def f(v: float | None) -> str:
        return "-" if v is None else f"{v:10.2f}"

    lines = [f"{'figure':<34} {'unit':<9} {'first':>10} {'last':>10} {'peak':>10}  verdict"]
    for j in judged:
        lines.append(f"{j.name:<34} {j.unit:<9} {f(j.first)} {f(j.last)} {f(j.peak)}  {j.verdict}")
    lines.append("")
    lines.append("faults:")
    lines += [f"  {o.line()}" for o in outcomes]
    return "\n".join(lines)


def flat(judged: list[Judged]) -> bool:
    return all(not j.verdict.startswith("GROWS") for j in judged)


def plot(
    all_series: list[Series],
    outcomes: list[Outcome],
    takeovers: list[tuple[float, float]],
    path: Path,
    title: str,
) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(3, 4, figsize=(20, 11))
    cells = list(axes.flat)
    end = max([t for x in all_series for t, _ in x.points] + [60.0]) / 60
    for ax in cells:
        ax.set_xlim(0, end * 1.02)
    for ax, s in zip(cells, all_series, strict=False):
        if s.points:
            ax.plot([t / 60 for t, _ in s.points], [v for _, v in s.points], lw=1.2)
        ax.set_title(s.name, fontsize=10)
        ax.set_ylabel(s.unit)
        ax.set_xlabel("minutes")
        ax.set_ylim(bottom=0)
        for o in outcomes:
            ax.axvline(o.at / 60, color="red", alpha=0.25, lw=0.8)
    ax = cells[len(all_series)]
    if takeovers:
        ax.scatter([t / 60 for t, _ in takeovers], [v for _, v in takeovers], color="black")
    ax.set_title("takeover after a worker's kill -9", fontsize=10)
    ax.set_ylabel("s")
    ax.set_xlabel("minutes")
    ax.set_ylim(bottom=0)
    ax = cells[len(all_series) + 1]
    recoveries = [(o.at / 60, o.recovery, o.kind) for o in outcomes]
    for at, recovery, kind in recoveries:
        ax.bar(at, recovery, width=0.3)
        ax.annotate(kind, (at, recovery), fontsize=7, rotation=60)
    ax.set_title("recovery after each fault (red lines)", fontsize=10)
    ax.set_ylabel("s")
    ax.set_xlabel("minutes")
    for spare in cells[len(all_series) + 2 :]:
        spare.axis("off")
    figure.suptitle(title)
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=90)
    plt.close(figure)
