"""What a process on this machine has used so far, read from /proc: processor time and resident
memory. One copy for every benchmark."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

BROKER_PID = Path(__file__).resolve().parents[2] / ".data" / "kafka" / "kafka.pid"
"""The local broker's pid file (deploy/kafka/up.sh)."""


def cpu_seconds(pid: int) -> float:
    """User and system processor seconds of a process and its threads so far (0 once gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_bytes(pid: int) -> int:
    """Resident set size of a running process, in bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise LookupError(f"no VmRSS for process {pid}")


def local_broker() -> int | None:
    """The local broker's pid, when it runs (None: the benchmark's broker is another's)."""
    try:
        pid = int(BROKER_PID.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    return pid if Path(f"/proc/{pid}").exists() else None


class Processor:
    """Processor seconds that the processes watched and the local broker used between `start`
    and `stop`, and the events moved meanwhile: what an event cost the machine."""

    def __init__(self) -> None:
        self.broker = local_broker()
        self.pids: list[int] = []
        self.began: dict[int, float] = {}
        self.used: dict[int, float] = {}
        self.events = 0

    def watch(self, pids: Iterable[int]) -> None:
        self.pids = list(pids)

    def _every(self) -> list[int]:
        return [*self.pids, *([self.broker] if self.broker is not None else [])]

    def start(self) -> None:
        self.began = {pid: cpu_seconds(pid) for pid in self._every()}

    def stop(self, events: int) -> None:
        self.used = {pid: cpu_seconds(pid) - self.began.get(pid, 0.0) for pid in self._every()}
        self.events = events

    def per_event(self) -> tuple[float, float | None]:
        """Microseconds of processor time an event: the processes watched, the broker (None when
        it is not the local one)."""
        if not self.events:
            return 0.0, None
        ours = sum(self.used.get(pid, 0.0) for pid in self.pids)
        broker = None if self.broker is None else self.used.get(self.broker, 0.0)
        scale = 1e6 / self.events
        return ours * scale, None if broker is None else broker * scale
