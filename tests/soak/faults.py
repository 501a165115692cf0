"""The soak's faults: a seeded schedule, each fault done and undone, and what it cost.

Every fault is undone by the time `inflict` returns, also when it fails: a stopped broker is
continued, a partition's iptables rules are deleted (and at exit too), a ballast file is removed.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import random
import re
import signal
import subprocess
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from services.audit.reader import committed_lag
from tests.soak.stack import OUT, SMALL_NODE, Stack, say
from tests.soak.watch import SAMPLE, Sample

KINDS = (
    "worker",
    "projector",
    "broker-kill",
    "broker-pause",
    "postgres",
    "partition",
    "disk-full",
)
CI_KINDS = ("worker", "projector", "broker-kill", "broker-pause", "postgres", "partition")
"""What `make soak-ci` keeps: all but the full disk, whose node takes a minute to come back."""
OUTAGE = 20.0
"""Seconds a broker stays paused or cut off: past its session (4 s) and the clients' (10 s)."""
RECOVERED = 300.0
"""Seconds a fault may take to be recovered from before the soak fails."""
CAUGHT = 30.0
"""Seconds before a fault in which a round decided may have its settlement held up by it."""


@dataclass(frozen=True, kw_only=True)
class Planned:
    at: float
    kind: str
    target: int


def schedule(
    seed: int, kinds: tuple[str, ...], first: float, last: float, every: float
) -> list[Planned]:
    """Faults from `first` to `last` seconds, one every `every` (jittered), the kinds in seeded
    turns (each kind once before any twice), each on a seeded target."""
    rng = random.Random(f"soak-{seed}")
    planned: list[Planned] = []
    turn: list[str] = []
    at = first
    while at <= last:
        if not turn:
            turn = list(kinds)
            rng.shuffle(turn)
        kind = turn.pop()
        target = {
            "worker": rng.randrange(3),
            "projector": rng.randrange(2),
            "disk-full": SMALL_NODE,
        }.get(kind, rng.randint(1, 3))
        planned.append(Planned(at=at + rng.uniform(0, every / 4), kind=kind, target=target))
        at += every
    return planned


@dataclass(kw_only=True)
class Outcome:
    """What one fault did: how long it lasted, how long until the system had recovered, the lag
    at its worst, and the log lines it caused (warnings and errors, by kind)."""

    kind: str
    target: int
    at: float
    outage: float = 0.0
    takeover: float | None = None
    recovery: float = 0.0
    lag_before: int = 0
    peak_lag: int = 0
    worst: float = 0.0
    """The longest settlement latency (a result to its settlements readable) while it lasted."""
    note: str = ""
    logged: Counter[str] = field(default_factory=Counter)

    def line(self) -> str:
        takeover = "" if self.takeover is None else f" takeover {self.takeover:5.1f} s"
        top = "; ".join(f"{n}x {text}" for text, n in self.logged.most_common(3))
        return (
            f"{self.at:7.0f} s {self.kind:<12} target {self.target} outage {self.outage:5.1f} s"
            f"{takeover} recovery {self.recovery:6.1f} s lag {self.lag_before}->{self.peak_lag}"
            f" worst settlement {self.worst:5.1f} s"
            f"{' ' + self.note if self.note else ''}{' | ' + top if top else ''}"
        )


class Firewall:
    """iptables rules on the loopback that drop a node's traffic, each one deleted exactly."""

    TAG = "croupier-soak"

    def __init__(self) -> None:
        self.rules: list[list[str]] = []
        atexit.register(self.clear)

    def cut(self, ports: tuple[int, ...]) -> None:
        for port in ports:
            for way in ("--dport", "--sport"):
                rule = ["INPUT", "-i", "lo", "-p", "tcp", way, str(port)]
                rule += ["-m", "comment", "--comment", self.TAG, "-j", "DROP"]
                subprocess.run(["iptables", "-I", *rule], check=True, timeout=30)
                self.rules.append(rule)

    def clear(self) -> None:
        while self.rules:
            rule = self.rules.pop()
            subprocess.run(["iptables", "-D", *rule], check=False, timeout=30)

    @classmethod
    def leftovers(cls) -> None:
        """Delete the rules an earlier soak left (killed before it could): only ones it tags."""
        listed = subprocess.run(
            ["iptables", "-S", "INPUT"], check=True, capture_output=True, text=True, timeout=30
        ).stdout
        for line in listed.splitlines():
            if f"--comment {cls.TAG} " in line and line.startswith("-A INPUT "):
                subprocess.run(["iptables", "-D", *line.split()[1:]], check=False, timeout=30)


class Logs:
    """The new lines of the soak's logs since `mark`: warnings, errors and retries, by kind."""

    WORDS = re.compile(r"error|warn|retr|timed out|timeout|fail|refused", re.IGNORECASE)

    def __init__(self) -> None:
        self.sizes: dict[Path, int] = {}

    def mark(self) -> None:
        self.sizes = {p: p.stat().st_size for p in OUT.glob("*.log")}

    def since(self) -> Counter[str]:
        found: Counter[str] = Counter()
        for path in OUT.glob("*.log"):
            with open(path, "rb") as log:
                log.seek(self.sizes.get(path, 0))
                for raw in log.read().decode(errors="replace").splitlines():
                    if self.WORDS.search(raw) and "events sent;" not in raw:
                        found[f"{_owner(path)}: {_shape(raw)}"] += 1
        return found


def _owner(path: Path) -> str:
    return re.sub(r"^soak-settlement-|-\d+$", "", path.stem)


def _shape(line: str) -> str:
    """A log line without its times, numbers and addresses: lines that say the same thing
    count together."""
    line = re.sub(r"^\[[^\]]*\]\s*|^\S+ \S+ ", "", line)
    line = re.sub(r"0x[0-9a-f]+|\d+", "N", line)
    return line[:160]


class Faults:
    """Does the planned faults to the stack and keeps their outcomes."""

    def __init__(
        self,
        stack: Stack,
        started: float,
        samples: list[Sample],
        latencies: list[tuple[float, float]],
    ) -> None:
        self.stack = stack
        self.started = started
        self.samples = samples
        self.latencies = latencies
        self.firewall = Firewall()
        self.logs = Logs()
        self.outcomes: list[Outcome] = []
        self.takeovers: list[tuple[float, float]] = []

    def lag(self) -> int | None:
        settings = self.stack.ready()
        try:
            return committed_lag(settings, settings.group_id, list(settings.inputs), wait=5.0)
        except Exception:  # the group coordinator may be moving: not known now
            return None

    def inflict(self, planned: Planned) -> Outcome:
        outcome = Outcome(
            kind=planned.kind, target=planned.target, at=time.monotonic() - self.started
        )
        outcome.lag_before = self.lag() or 0
        self.logs.mark()
        say(f"fault {planned.kind} on {planned.target}")
        began = time.monotonic()
        action: dict[str, Callable[[int, Outcome], None]] = {
            "worker": self._worker,
            "projector": self._projector,
            "broker-kill": self._broker_kill,
            "broker-pause": self._broker_pause,
            "postgres": self._postgres,
            "partition": self._partition,
            "disk-full": self._disk_full,
        }
        action[planned.kind](planned.target, outcome)
        outcome.outage = time.monotonic() - began
        self._recover(outcome)
        outcome.logged = self.logs.since()
        self._during(outcome)
        self.outcomes.append(outcome)
        say(outcome.line())
        return outcome

    def _recover(self, outcome: Outcome) -> None:
        """Until the cluster is whole, the workers healthy and the lag back near where it was."""
        began = time.monotonic()
        nodes = self.stack.kafka.nodes
        nodes.whole(timeout=RECOVERED)
        workers = self.stack.workers
        assert workers is not None
        problems = workers.healthy(timeout=RECOVERED)
        assert not problems, f"after {outcome.kind}: {problems}"
        enough = max(2000, 2 * outcome.lag_before)
        while time.monotonic() - began < RECOVERED:
            lag = self.lag()
            if lag is not None:
                outcome.peak_lag = max(outcome.peak_lag, lag)
                if lag <= enough:
                    outcome.recovery = time.monotonic() - began + outcome.outage
                    return
            time.sleep(1.0)
        raise TimeoutError(f"{outcome.kind}: lag not back under {enough} in {RECOVERED:.0f} s")

    def recount(self) -> None:
        """Each fault's worst lag and latency again, at the end: a settlement held up by a fault
        may have been read only after its recovery was declared."""
        for outcome in self.outcomes:
            self._during(outcome)

    def spans(self) -> list[tuple[float, float]]:
        """From CAUGHT seconds before each fault to a sample's time after its recovery."""
        return [(o.at - CAUGHT, o.at + o.recovery + SAMPLE) for o in self.outcomes]

    def _during(self, outcome: Outcome) -> None:
        """The sampled lag at its worst, from the fault's start to a sample's time after its
        recovery, and the longest settlement latency of a round decided then or in the CAUGHT
        seconds before it."""
        end = outcome.at + outcome.recovery + SAMPLE
        lags = [s.lag for s in list(self.samples) if outcome.at <= s.t <= end and s.lag]
        outcome.peak_lag = max([outcome.peak_lag, *lags])
        since = outcome.at - CAUGHT
        worst = [v for t, v in list(self.latencies) if since <= t <= end]
        outcome.worst = max(worst, default=0.0)

    def _worker(self, target: int, outcome: Outcome) -> None:
        workers = self.stack.workers
        assert workers is not None
        victim = workers.workers[target % len(workers.workers)]
        killed = time.monotonic()
        workers.replace(victim)
        problems = workers.healthy(timeout=RECOVERED)
        assert not problems, f"no takeover after a worker's kill -9: {problems}"
        outcome.takeover = time.monotonic() - killed
        self.takeovers.append((killed - self.started, outcome.takeover))

    def _projector(self, target: int, outcome: Outcome) -> None:
        projector = self.stack.projectors[target]
        projector.kill9()
        projector.start()

    def _broker_kill(self, target: int, outcome: Outcome) -> None:
        nodes = self.stack.kafka.nodes
        killed = time.monotonic()
        nodes.kill9(target)
        time.sleep(5.0)
        nodes.start(target)
        outcome.takeover = time.monotonic() - killed

    def _broker_pause(self, target: int, outcome: Outcome) -> None:
        pid = self.stack.kafka.pid(target)
        assert pid is not None, f"node {target} is not running"
        os.kill(pid, signal.SIGSTOP)
        try:
            time.sleep(OUTAGE)
        finally:
            os.kill(pid, signal.SIGCONT)

    def _postgres(self, target: int, outcome: Outcome) -> None:
        self.stack.postgres.restart()

    def _partition(self, target: int, outcome: Outcome) -> None:
        try:
            self.firewall.cut(self.stack.kafka.ports(target))
            time.sleep(OUTAGE)
        finally:
            self.firewall.clear()

    def _disk_full(self, target: int, outcome: Outcome) -> None:
        """Fill the node's tmpfs log directory with a ballast file; Kafka takes the directory
        offline and, it being the node's only one, shuts the node down: then the ballast goes
        and the node is started again."""
        kafka = self.stack.kafka
        ballast = kafka.small / "ballast"
        pid = kafka.pid(target)
        try:
            _fill(ballast)
            end = time.monotonic() + 120
            while kafka.pid(target) == pid and pid is not None and time.monotonic() < end:
                time.sleep(0.5)
            stopped = kafka.pid(target) is None
            outcome.note = (
                f"node stopped after {time.monotonic() - end + 120:.0f} s"
                if stopped
                else "node still running after 120 s"
            )
        finally:
            ballast.unlink(missing_ok=True)
        if kafka.pid(target) is not None:  # it went on with its directory offline: restart it
            kafka.nodes.kill9(target)
        kafka.nodes.start(target)


def _fill(path: Path) -> None:
    """Write zeros to `path` until its filesystem is full. Unbuffered: a buffered file would
    raise the full disk again when it is closed, with what it could not write still held."""
    chunk = b"\0" * (1024 * 1024)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with contextlib.suppress(OSError):
            while os.write(fd, chunk):
                pass
    finally:
        os.close(fd)
