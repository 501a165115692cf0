"""A day on the floor in an hour: the whole system at a floor's rate under a seeded schedule of
faults, checked exact every few minutes and at the end, and flat over the run.

SOAK_MINUTES (60) the run's length; SOAK_SEED the schedule's seed (printed at the start);
SOAK_FAULTS the kinds of fault (comma-separated, default all of tests/soak/faults.py's KINDS);
SOAK_FAULT_EVERY seconds between two faults (240; a run under 20 minutes does each kind once);
SOAK_CHECK_MINUTES minutes between two checks (10). Figures and the PNG go to test-output/soak/.
"""

from __future__ import annotations

import atexit
import os
import signal
import time
from types import FrameType

import msgspec

from tests.soak.checks import Checked, check
from tests.soak.faults import KINDS, Faults, Firewall, Outcome, Planned, schedule
from tests.soak.report import flat, judge, plot, series, table
from tests.soak.stack import FULL, OUT, Stack, say
from tests.soak.watch import Sampler, Tape

MINUTES = float(os.environ.get("SOAK_MINUTES", "60"))
SEED = int(os.environ.get("SOAK_SEED") or time.time_ns() % 1_000_000)
FAULTS = tuple(k for k in os.environ.get("SOAK_FAULTS", ",".join(KINDS)).split(",") if k)
RUN = MINUTES * 60
CHECK_EVERY = float(os.environ.get("SOAK_CHECK_MINUTES", "10")) * 60
WARMUP = min(300.0, RUN / 5)
"""Seconds before the first fault, and before the figures' first window."""
LAST = RUN - min(120.0, RUN / 5)
"""Seconds into the run of the last fault: time is left to recover before the end."""
EVERY = float(
    os.environ.get("SOAK_FAULT_EVERY")
    or (240 if RUN >= 1200 else (LAST - WARMUP) / max(1, len(FAULTS) - 1))
)
"""Seconds between two faults; a short run does each kind once."""


def _terminate(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt(f"signal {signum}")  # unwinds through every finally


def test_a_floor_under_faults_stays_exact_and_flat() -> None:
    unknown = set(FAULTS) - set(KINDS)
    assert not unknown, f"SOAK_FAULTS names unknown faults {unknown}; known: {KINDS}"
    say(f"seed {SEED} (SOAK_SEED={SEED} repeats it), {MINUTES:g} minutes, faults {FAULTS}")
    Firewall.leftovers()
    signal.signal(signal.SIGTERM, _terminate)
    stack = Stack(seed=SEED)
    atexit.register(stack.close)
    checks: list[Checked] = []
    planned: list[Planned] = []
    outcomes: list[Outcome] = []
    verdict = "not measured"
    try:
        stack.start()
        started = time.monotonic()
        tape = Tape(settings=stack.ready(), started=started).start()
        sampler = Sampler(stack, started).start()
        faults = Faults(stack, started, sampler.samples, tape.latencies)
        try:
            planned = schedule(SEED, FAULTS, WARMUP, LAST + 1, EVERY)
            say("schedule: " + ", ".join(f"{p.at:.0f} s {p.kind} {p.target}" for p in planned))
            due = CHECK_EVERY

            def until(moment: float) -> None:
                nonlocal due
                while (now := time.monotonic() - started) < moment:
                    if now >= due:
                        checks.append(check(stack, tape, started, len(checks)))
                        due += CHECK_EVERY
                    time.sleep(min(1.0, max(0.0, moment - now)))

            for fault in planned:
                until(fault.at)
                outcomes.append(faults.inflict(fault))
            until(RUN)
            checks.append(check(stack, tape, started, len(checks)))
        finally:
            sampler.stop()
            tape.stop()
            verdict = _report(sampler, tape, faults, time.monotonic() - started)
    finally:
        stack.close()
        atexit.unregister(stack.close)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
    bad = [c.line() for c in checks if not c.ok]
    assert not bad, "checks failed:\n" + "\n".join(bad)
    assert outcomes and len(outcomes) == len(planned), "not every planned fault was done"
    assert verdict.startswith("FLAT"), verdict


def _report(sampler: Sampler, tape: Tape, faults: Faults, end: float) -> str:
    """Print and save the figures, plot them; the verdict and the table."""
    bucket = 300.0 if end >= 1800 else 60.0
    faults.recount()
    everything = series(sampler.samples, tape.latencies, bucket, FULL, faults.spans())
    judged = judge(everything, WARMUP, end, window=600.0)
    verdict = "FLAT" if flat(judged) else "NOT FLAT"
    text = table(judged, faults.outcomes)
    title = (
        f"soak seed {SEED}: {end / 60:.1f} min, {len(faults.outcomes)} faults; first vs last "
        f"10 min at most of each figure's steady part (from {WARMUP / 60:.0f} min): {verdict}"
    )
    raw = {"samples": sampler.samples, "latencies": tape.latencies, "end": end}
    (OUT / f"soak-{SEED}.json").write_bytes(msgspec.json.encode(raw))
    png = OUT / f"soak-{SEED}.png"
    plot(everything, faults.outcomes, faults.takeovers, png, title)
    with open(OUT / f"soak-{SEED}.txt", "w") as out:
        out.write(f"{title}\n{text}\n")
    say(f"{title}\n{text}\nplot: {png}")
    return f"{verdict}\n{text}"
