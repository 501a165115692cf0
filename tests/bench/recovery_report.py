"""`make bench-recovery`'s report of a takeover, and its figures for its result file
(tests/bench/results.py)."""

from __future__ import annotations

import statistics
from typing import TYPE_CHECKING

from tests.bench.pipeline import p99
from tests.bench.results import Figure, figure

if TYPE_CHECKING:
    from tests.bench.recovery import Takeover


def report(t: Takeover) -> list[str]:
    r = t.restore
    state = (
        "state not read (the engine refolds)"
        if r.records is None
        else f"{r.records:,} state records ({(r.size or 0) / 2**20:.1f} MiB) read"
    )
    lines = [
        f"history {t.events:,} events, durable state {'on' if t.durable else 'off'}"
        f"{', one more round on every table before the kill' if t.live else ''}:",
        f"  takeover (replacement start to the new round readable)  {t.takeover_s:6.2f} s "
        f"(the replacement's processor time until then {t.cpu_takeover:.2f} s; load average "
        f"{t.load})",
        f"  restore: {state}, {r.events:,} input events refolded, {r.seconds:.2f} s (tasks {sorted(r.tasks)})",
    ]
    if r.first_line is not None and r.ready_at is not None:
        boot = r.first_line - t.started_at
        join = r.ready_at - r.seconds - r.first_line
        last = t.takeover_s - (r.ready_at - t.started_at)
        lines.append(
            f"  where it went: interpreter and imports {boot:.2f} s, faust start and group join "
            f"{join:.2f} s, restore {r.seconds:.2f} s, the new round after ready {last:.2f} s"
        )
    if r.parts:
        lines.append(
            "  the restore: " + ", ".join(f"{name} {sec:.2f} s" for name, sec in r.parts.items())
        )
    if r.first_transaction is not None and r.first_transaction_at is not None:
        seen = t.started_at + t.takeover_s - r.first_transaction_at
        lines.append(
            f"  the new round: first transaction {r.first_transaction}; the bench's "
            f"read_committed reader saw it {seen:+.2f} s from when that commit was logged (the "
            "loop logs a commit when it next looks, up to 0.2 s after it)"
        )
    lines.append(
        f"  worker RSS: after catch-up {t.rss_caught_up / 2**20:.0f} MiB, after takeover "
        f"{t.rss_takeover / 2**20:.0f} MiB; first worker settled all in {t.catch_up_s:.1f} s from its start "
        f"({t.events / t.catch_up_s:,.0f} events/s, first start restored {t.caught_up.events:,} events)"
    )
    return lines


TAKEOVER_TARGET_S = 2.0
"""The longest takeover after kill -9 the project asks for, at any length of history."""


def takeover_figures(t: Takeover) -> list[Figure]:
    """A takeover's time and the replacement's processor time until then, at one history size."""
    state = "on" if t.durable else "off"
    at = f"{t.events:,} events of history, durable state {state}"
    return [
        figure(
            f"takeover_{t.events}_{state}",
            f"takeover after kill -9, the replacement's start to its new round readable, {at}",
            t.takeover_s,
            "s",
            target=("value", "at most", TAKEOVER_TARGET_S) if t.durable else None,
            note=f"load average {t.load}",
        ),
        figure(
            f"takeover_cpu_{t.events}_{state}",
            f"the replacement's processor time until then, {at}",
            t.cpu_takeover,
            "s",
        ),
        figure(
            f"restore_{t.events}_{state}",
            f"its restore, {at}",
            t.restore.seconds,
            "s",
        ),
        figure(
            f"rss_{t.events}_{state}",
            f"the replacement's resident memory after the takeover, {at}",
            t.rss_takeover / 2**20,
            "MiB",
            baseline=("the first worker's after its catch-up", t.rss_caught_up / 2**20),
        ),
    ]


def pipeline_figures(
    published: int,
    rates: dict[bool, list[float]],
    latencies: dict[bool, list[float]],
    repeats: int,
) -> list[Figure]:
    """Throughput and a 10,000-bet round's latency with the durable state on, against off in the
    same run, taking turns."""
    runs = f"median of {repeats} runs a setting, taking turns"
    return [
        figure(
            "durable_state_rate",
            f"settled bets/s over {published:,} preloaded bets, 1 worker, durable state on; {runs}",
            statistics.median(rates[True]),
            "bets/s",
            baseline=("durable state off", statistics.median(rates[False])),
            target=("ratio", "at least", 0.9),
        ),
        figure(
            "durable_state_p99",
            "round.result to all 10,000 settlements readable, p99, durable state on",
            p99(latencies[True]) * 1000,
            "ms",
            baseline=("durable state off", p99(latencies[False]) * 1000),
            target=("value", "at most", 250.0),
        ),
    ]
