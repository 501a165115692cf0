"""`make bench`'s memory part: the fold's resident memory while a million rounds stream
through, next to the same fold without a horizon, each in a process of its own
(`python -m tests.bench.replay --memory HORIZON` runs one)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from services.settlement.fold import DEFAULT_HORIZON, Fold
from tests.bench.results import Figure, figure

ROUNDS = int(os.environ.get("CROUPIER_BENCH_ROUNDS", "1000000"))


def rss_mib() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def memory(horizon: int) -> list[tuple[int, float, int]]:
    """Resident memory while ROUNDS rounds (two bets and a redelivery each, one in ten corrected)
    stream through."""
    fold = Fold(horizon=horizon)
    at = "2026-11-29T12:00:00Z"
    samples: list[tuple[int, float, int]] = []
    for n in range(ROUNDS):
        table = f"T{n % 10}"
        head = f'"v":1,"table_id":"{table}","round_id":"R{n}","at":"{at}"'
        fold.feed(
            "rounds", f'{{"type":"round.opened","event_id":"o{n}",{head},"game":"sicbo"}}'.encode()
        )
        for seq in (1, 2):
            bet = (
                f'{{"type":"bet.placed","event_id":"b{n}-{seq}",{head},"bet_id":"B{n}-{seq}",'
                f'"player_id":"P{n % 97}","seq":{seq},"kind":"big","stake":100,"currency":"EUR"}}'
            ).encode()
            fold.feed("bets", bet)
        fold.feed("bets", bet)
        fold.feed(
            "rounds",
            f'{{"type":"round.betting_closed","event_id":"c{n}",{head},"last_seq":2}}'.encode(),
        )
        fold.feed(
            "rounds",
            f'{{"type":"round.result","event_id":"r{n}",{head},"dice":[1,2,{1 + n % 6}]}}'.encode(),
        )
        if n % 10 == 0:  # one round in ten corrected by a supervisor
            fold.feed(
                "rounds",
                f'{{"type":"round.corrected","event_id":"x{n}",{head},"dice":[6,6,{1 + n % 5}],'
                f'"reason":"misread","authorized_by":"ana"}}'.encode(),
            )
        if (n + 1) % (ROUNDS // 10) == 0:
            kept = sum(len(t.rounds) for t in fold.tables.values())
            samples.append((n + 1, rss_mib(), kept))
            print(
                f"  horizon {horizon}: {n + 1:,} rounds, {samples[-1][1]:.0f} MiB",
                file=sys.stderr,
                flush=True,
            )
    return samples


def memory_side_by_side() -> list[Figure]:
    """The bounded fold next to the same fold that never forgets, each in a process of its own."""
    bounded = _in_process(DEFAULT_HORIZON)
    unbounded = _in_process(10**12)
    print(
        f"memory: {ROUNDS:,} rounds on 10 tables (2 bets and a redelivered bet each, "
        "one in ten corrected)"
    )
    print(
        f"{'rounds':>12}{'RSS MiB, horizon ' + str(DEFAULT_HORIZON):>24}{'rounds kept':>14}{'RSS MiB, no horizon':>22}{'rounds kept':>14}"
    )
    for (n, rss, kept), (_, rss_all, kept_all) in zip(bounded, unbounded, strict=True):
        print(f"{n:>12,}{rss:>24.1f}{kept:>14,}{rss_all:>22.1f}{kept_all:>14,}")
    (first, first_rss, _), (last, last_rss, _) = bounded[0], bounded[-1]
    return [
        figure(
            "memory_first",
            f"fold's resident memory after {first:,} rounds, horizon {DEFAULT_HORIZON}",
            first_rss,
            "MiB",
            baseline=("the same fold without a horizon", unbounded[0][1]),
        ),
        figure(
            "memory_last",
            f"fold's resident memory after {last:,} rounds, horizon {DEFAULT_HORIZON}",
            last_rss,
            "MiB",
            baseline=("the same fold without a horizon", unbounded[-1][1]),
        ),
    ]


def _in_process(horizon: int) -> list[tuple[int, float, int]]:
    done = subprocess.run(
        [sys.executable, "-m", "tests.bench.replay", "--memory", str(horizon)],
        capture_output=True,
        check=True,
    )
    sys.stderr.buffer.write(done.stderr)
    return [tuple(row) for row in json.loads(done.stdout)]  # type: ignore[misc]
