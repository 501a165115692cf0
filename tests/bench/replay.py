"""`make bench`: replay throughput next to a bare `json.loads` of the same file, the same replay
with every table signing its money-moving round events (checked against the tables' keys), and
memory.

Both sides run in this one process, on the same file, taking turns, best of several repeats each,
so the ratio is comparable even on a noisy machine.
"""

from __future__ import annotations

import gc
import io
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from services.settlement.fold import Fold
from services.settlement.replay import lines as replay_lines
from services.settlement.replay import replay, split_lines
from services.signing.signature import TableKeys
from services.simulation.streams import Profile, generate
from tests.bench.replay_memory import memory, memory_side_by_side
from tests.bench.results import Figure, Run, figure

EVENTS = int(os.environ.get("CROUPIER_BENCH_EVENTS", "500000"))
REPEATS = int(os.environ.get("CROUPIER_BENCH_REPEATS", "5"))
DATA = Path(os.environ.get("CROUPIER_BENCH_DIR", ".data/bench"))


def stream_file() -> Path:
    """A generated stream of at least EVENTS events, with every contract case, cached on disk."""
    path = DATA / f"stream-{EVENTS}.jsonl"
    if path.exists():
        return path
    DATA.mkdir(parents=True, exist_ok=True)
    print(f"generating {EVENTS:,} events into {path} ...", file=sys.stderr, flush=True)
    profile = Profile(bets_per_round=(20, 80))
    lines: list[bytes] = []
    batch = 0
    while len(lines) < EVENTS:
        streams = generate(batch, tables=20, rounds=10, profile=profile, first_round=batch * 10)
        for r in range(0, max(len(streams.rounds), len(streams.bets)), 50):
            lines.extend(streams.rounds[r : r + 50])
            lines.extend(streams.bets[r : r + 50])
        batch += 1
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def signed_file(path: Path) -> tuple[Path, TableKeys]:
    """The same stream with every table's money-moving round events signed by its own key
    (derived from its name), and those keys, as the workers would be given them.

    Imported here, so that the memory runs load no cryptography (OpenSSL: 10 MiB resident)."""
    from services.signing.keys import derived_key
    from tests.unit.signing import sign_all

    signed = path.with_name(path.stem + "-signed.jsonl")
    lines = path.read_bytes().split(b"\n")
    tables = {t.decode() for t in _table_ids(lines)}
    signers = {table: derived_key("bench", table) for table in sorted(tables)}
    if not signed.exists():
        print(f"signing the stream into {signed} ...", file=sys.stderr, flush=True)
        signed.write_bytes(b"\n".join(sign_all(lines, signers)))
    return signed, {table: (key.public_key(),) for table, key in signers.items()}


def _table_ids(lines: list[bytes]) -> set[bytes]:
    found = set()
    for line in lines:
        at = line.find(b'"table_id":"')
        if at >= 0:
            found.add(line[at + 12 : line.index(b'"', at + 12)])
    return found


def best(runs: dict[str, Callable[[], int]]) -> dict[str, tuple[list[float], int]]:
    """The REPEATS run times of each work, in seconds, and what it counted.

    The works take turns (one run of each, then again), so a machine slowing down or speeding up
    in the middle of the benchmark weighs on both sides alike.
    """
    times: dict[str, list[float]] = {label: [] for label in runs}
    counts: dict[str, int] = {}
    for n in range(REPEATS):
        for label, work in runs.items():
            gc.collect()
            start = time.perf_counter()
            counts[label] = work()
            times[label].append(time.perf_counter() - start)
            print(
                f"  {label} run {n + 1}/{REPEATS}: {times[label][-1]:.3f} s",
                file=sys.stderr,
                flush=True,
            )
    return {label: (times[label], counts[label]) for label in runs}


def _events(path: Path) -> int:
    with open(path, "rb") as stream:
        return sum(1 for line in stream if line.strip())


def throughput(path: Path, events: int) -> list[Figure]:
    print(
        f"stream: {path} ({events:,} events, {path.stat().st_size / 1e6:.1f} MB), "
        "both read from the file"
    )

    def bare() -> int:
        loads = json.loads
        with open(path, "rb") as stream:
            for line in stream:
                try:  # noqa: SIM105 - contextlib.suppress per line would slow the baseline down
                    loads(line)
                except ValueError:
                    pass
        return events

    def croupier() -> int:
        with open(os.devnull, "wb") as sink:
            return replay(replay_lines([str(path)]), sink, Fold(), stats=True)

    signed, keys = signed_file(path)
    checked = signed.read_bytes().count(b'"sig":"')
    probe = io.BytesIO()
    replay(replay_lines([str(signed)]), probe, Fold(keys=keys))
    assert b"bad_signature" not in probe.getvalue(), "the signed stream must verify throughout"

    def croupier_signed() -> int:
        with open(os.devnull, "wb") as sink:
            return replay(replay_lines([str(signed)]), sink, Fold(keys=keys), stats=True)

    timed = best(
        {
            "json.loads": bare,
            "croupier replay": croupier,
            "croupier replay, signed": croupier_signed,
        }
    )
    bases, _ = timed["json.loads"]
    ourses, records = timed["croupier replay"]
    signeds, signed_records = timed["croupier replay, signed"]
    print("whole file, each side in turn, best of", REPEATS)
    table(events, min(bases), min(ourses), records)
    print(
        f"{'replay, signed':24}{min(signeds):>10.3f}{events / min(signeds):>14,.0f}"
        f"   ({signed_records:,} records out; {checked:,} signatures checked against "
        f"{len(keys)} tables' keys, {signed.stat().st_size / 1e6:.1f} MB)"
    )
    print(
        f"ratio signed/unsigned replay: {min(ourses) / min(signeds):.2f}; per run "
        + ", ".join(f"{o / g:.2f}" for o, g in zip(ourses, signeds, strict=True))
        + f" (load average {os.getloadavg()[0]:.2f})"
    )
    pairs = sorted(b / o for b, o in zip(bases, ourses, strict=True))
    print(
        f"ratio of each run to the bare run just before it: {', '.join(f'{r:.2f}' for r in pairs)}"
        f" (median {statistics.median(pairs):.2f})"
    )
    print()
    runs = interleaved(path)
    print(f"block by block: each 1 MiB block parsed bare, then replayed; sums, best of {REPEATS}")
    table(events, min(b for b, _ in runs), min(o for _, o in runs), records)
    pairs = sorted(b / o for b, o in runs)
    print(
        f"ratio of each run: {', '.join(f'{r:.2f}' for r in pairs)}"
        f" (median {statistics.median(pairs):.2f})"
    )
    each = ", ".join(f"{r:.2f}" for r in pairs)
    block_base, block_ours = min(b for b, _ in runs), min(o for _, o in runs)
    return [
        figure(
            "replay_block_by_block",
            f"croupier replay, block by block ({events:,} events; 1 MiB blocks, the sides taking"
            f" turns), best of {REPEATS}",
            events / block_ours,
            "events/s",
            baseline=("bare json.loads of the same lines", events / block_base),
            target=("ratio", "at least", 1.0),
            note=f"ratio of each run {each}",
        ),
        figure(
            "replay_whole_file",
            f"croupier replay, whole file, each side in turn, best of {REPEATS}",
            events / min(ourses),
            "events/s",
            baseline=("bare json.loads of the same file", events / min(bases)),
            note="the machine's drift within seconds weighs on one side or the other",
        ),
    ]


def signed_side_by_side(path: Path) -> list[Figure]:
    """The replay of the stream with every table signing next to the unsigned replay, taking
    turns block by block (the same lines of each file, the order alternating from block to
    block), so that the machine's drift weighs on both alike."""
    signed, keys = signed_file(path)
    plain_lines = path.read_bytes().split(b"\n")
    signed_lines = signed.read_bytes().split(b"\n")
    assert len(plain_lines) == len(signed_lines)
    checked = sum(line.count(b'"sig":"') for line in signed_lines)
    step = 4000
    cuts = range(0, len(plain_lines), step)
    runs: list[tuple[float, float]] = []
    for n in range(REPEATS):
        plain_fold, signed_fold = Fold(), Fold(keys=keys)
        plain = sign = 0.0
        gc.collect()
        with open(os.devnull, "wb") as sink:
            for b, cut in enumerate(cuts):
                sides = [
                    (plain_fold, plain_lines[cut : cut + step], False),
                    (signed_fold, signed_lines[cut : cut + step], True),
                ]
                for fold, block, is_signed in sides if b % 2 == 0 else sides[::-1]:
                    start = time.perf_counter()
                    replay(block, sink, fold)
                    took = time.perf_counter() - start
                    if is_signed:
                        sign += took
                    else:
                        plain += took
        runs.append((plain, sign))
        print(
            f"  signed block by block run {n + 1}/{REPEATS}: unsigned {plain:.3f} s, "
            f"signed {sign:.3f} s",
            file=sys.stderr,
            flush=True,
        )
    events = sum(1 for line in plain_lines if line.strip())
    best_plain = min(p for p, _ in runs)
    best_signed = min(g for _, g in runs)
    print(
        f"signed vs unsigned, block by block ({step:,} lines a block, the order alternating), "
        f"best of {REPEATS}; {checked:,} signatures checked ({checked / events:.1%} of the events)"
    )
    print(f"{'':24}{'seconds':>10}{'events/s':>14}")
    print(f"{'replay, unsigned':24}{best_plain:>10.3f}{events / best_plain:>14,.0f}")
    print(f"{'replay, all tables sign':24}{best_signed:>10.3f}{events / best_signed:>14,.0f}")
    ratios = sorted(p / g for p, g in runs)
    extra = sorted((g - p) / checked * 1e6 for p, g in runs)
    print(
        f"ratio signed/unsigned (events/s; < 1.0: signing costs): {best_plain / best_signed:.2f}; "
        "each run "
        + ", ".join(f"{r:.2f}" for r in ratios)
        + f" (median {statistics.median(ratios):.2f}); extra time per signature checked: median "
        f"{statistics.median(extra):.0f} us; load average {os.getloadavg()[0]:.2f}"
    )
    return [
        figure(
            "replay_signed",
            f"croupier replay, every table signing ({checked:,} signatures, {checked / events:.1%}"
            f" of the events), block by block, best of {REPEATS}",
            events / best_signed,
            "events/s",
            baseline=("the unsigned replay of the same stream", events / best_plain),
        ),
        figure(
            "signature_cost",
            "extra time per signature checked, median of the runs",
            statistics.median(extra),
            "us",
        ),
    ]


def table(events: int, base: float, ours: float, records: int) -> None:
    print(f"{'':24}{'seconds':>10}{'events/s':>14}")
    print(f"{'bare json.loads':24}{base:>10.3f}{events / base:>14,.0f}")
    out = f"   ({records:,} records out)" if records else ""
    print(f"{'croupier replay':24}{ours:>10.3f}{events / ours:>14,.0f}{out}")
    print(
        f"ratio croupier/bare: {base / ours:.2f} "
        "(>= 1.0 means the full settlement outruns the bare parse)"
    )


def interleaved(path: Path) -> list[tuple[float, float]]:
    """Both sides over the same file, taking turns block by block: the machine's speed, which
    drifts by tens of percent over seconds here, weighs on both alike. The replay goes on with
    the same fold from block to block, as one replay of the whole file does."""
    data = path.read_bytes()
    blocks: list[bytes] = []
    while data:
        cut = data.find(b"\n", 1 << 20) + 1 or len(data)
        blocks.append(data[:cut])
        data = data[cut:]
    loads = json.loads
    runs: list[tuple[float, float]] = []
    for n in range(REPEATS):
        fold = Fold()
        base = ours = 0.0
        gc.collect()
        with open(os.devnull, "wb") as sink:
            for block in blocks:
                start = time.perf_counter()
                for line in io.BytesIO(block):
                    try:  # noqa: SIM105 - as in the whole-file baseline
                        loads(line)
                    except ValueError:
                        pass
                middle = time.perf_counter()
                replay(split_lines(block), sink, fold)
                ours += time.perf_counter() - middle
                base += middle - start
            start = time.perf_counter()
            replay(iter(()), sink, fold, stats=True)
            ours += time.perf_counter() - start
        runs.append((base, ours))
        print(
            f"  block by block run {n + 1}/{REPEATS}: json.loads {base:.3f} s, "
            f"croupier replay {ours:.3f} s",
            file=sys.stderr,
            flush=True,
        )
    return runs


BARE = """
import json, sys
loads = json.loads
with open(sys.argv[1], "rb") as stream:
    for line in stream:
        try:
            loads(line)
        except ValueError:
            pass
"""
"""The bare side as a process of its own: `json.loads` of every line of the file."""


def from_process_start(path: Path, events: int) -> Figure:
    """`croupier replay FILE` (the installed command, its output to /dev/null) and a bare
    `json.loads` of the same file, each a process of its own, timed from its start to its end as
    a user times them: the interpreter's start and the imports count. In turns, best of REPEATS."""
    command = str(Path(sys.executable).with_name("croupier"))
    env = {k: v for k, v in os.environ.items() if k.upper() != "CROUPIER_TABLE_KEYS_FILE"}

    def timed(argv: list[str]) -> float:
        start = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, check=True, env=env)
        return time.perf_counter() - start

    bases: list[float] = []
    ourses: list[float] = []
    for n in range(REPEATS):
        bases.append(timed([sys.executable, "-c", BARE, str(path)]))
        ourses.append(timed([command, "replay", str(path)]))
        print(
            f"  from process start run {n + 1}/{REPEATS}: json.loads {bases[-1]:.3f} s, "
            f"croupier replay {ourses[-1]:.3f} s",
            file=sys.stderr,
            flush=True,
        )
    start = timed([command, "replay", os.devnull])
    print(f"from process start (the command's start alone: {start:.2f} s), best of {REPEATS}")
    table(events, min(bases), min(ourses), 0)
    each = ", ".join(f"{r:.2f}" for r in sorted(b / o for b, o in zip(bases, ourses, strict=True)))
    return figure(
        "replay_from_process_start",
        f"croupier replay FILE, timed from process start as a user times it, each side a process"
        f" of its own in turns, best of {REPEATS}",
        events / min(ourses),
        "events/s",
        baseline=("python -c: bare json.loads of the same file", events / min(bases)),
        note=f"ratio of each run {each}; the command alone starts in {start:.2f} s",
    )


def main() -> None:
    if sys.argv[1:2] == ["--memory"]:
        print(json.dumps(memory(int(sys.argv[2]))))
        return
    if sys.argv[1:2] == ["--signed"]:
        signed_side_by_side(stream_file())
        return
    run = Run("bench")
    path = stream_file()
    events = _events(path)
    figures = throughput(path, events)
    print()
    figures.append(from_process_start(path, events))
    print()
    figures += signed_side_by_side(path)
    print()
    figures += memory_side_by_side()
    run.save(figures)


if __name__ == "__main__":
    main()
