"""`make bench-readside`'s figures for its result file (tests/bench/results.py)."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Any

from tests.bench.results import Figure, figure

READ_TARGET_MS = 20.0
"""The p99 a history page or a round's recall must stay under."""


def p99_ms(times: list[float]) -> float:
    ordered = sorted(times)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1000


def readside_figures(
    *,
    bets: int,
    pipeline: float,
    pipeline_us: Sequence[float],
    runs: list[tuple[str, dict[str, Any]]],
    restarts: tuple[list[float], list[float]],
    answers: dict[str, list[float]],
    settled: dict[str, list[float]],
) -> list[Figure]:
    """The projectors' rate against the pipeline's, their processor time a bet against its, the
    restart on the full database against the empty one, and every query's p99, right after the
    projection and after VACUUM (ANALYZE)."""
    pipeline_label = f"the pipeline, settled bets/s over the same {bets:,} bets"
    found: list[Figure] = []
    for n, (name, run) in enumerate(runs):
        key = name.replace(" ", "_")
        found.append(
            figure(
                f"{key}_rate",
                f"{name}, bets projected/s",
                run["bets_per_s"],
                "bets/s",
                baseline=(pipeline_label, pipeline),
                target=("ratio", "at least", 1.5) if n == 0 else None,
            )
        )
        found.append(
            figure(
                f"{key}_cpu",
                f"{name}, processor time a bet (projectors, PostgreSQL, Kafka)",
                sum(run["cpu_us"]),
                "us/bet",
                baseline=("the pipeline's (workers, Kafka)", sum(pipeline_us)),
            )
        )
    rss = runs[0][1]["rss"]
    if rss:
        last = max(rss)
        found.append(
            figure(
                "projector_rss",
                f"{runs[0][0]}' largest resident memory at {last:,},000,000 bets",
                rss[last],
                "MiB",
                baseline=("at 1,000,000 bets", rss.get(1, 0)),
            )
        )
    full, empty = restarts
    found.append(
        figure(
            "restart",
            "restart to caught up on the full database, median of 3",
            statistics.median(full),
            "s",
            baseline=("on an empty database", statistics.median(empty)),
        )
    )
    for when, groups in (("right after the projection", answers), ("after VACUUM", settled)):
        for name, times in groups.items():
            key = name.split(",")[0].split(" (")[0].replace(" ", "_")
            held = not name.startswith("report")
            found.append(
                figure(
                    f"{key}_p99_{'after' if groups is answers else 'settled'}",
                    f"{name}, p99 over HTTP, {when}",
                    p99_ms(times),
                    "ms",
                    target=("value", "at most", READ_TARGET_MS) if held else None,
                    note=f"p50 {statistics.median(times) * 1000:.1f} ms",
                )
            )
    return found
