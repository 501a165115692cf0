"""What a worker's log says about its tasks becoming ready: state restored, input refolded."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

READY = re.compile(
    r"tasks \[(?P<tasks>[\d, ]*)\] ready: (?:(?P<records>\d+) state records \((?P<bytes>\d+) "
    r"bytes\) restored, )?(?P<events>\d+) committed events refolded in (?P<seconds>[\d.]+) s"
    r"(?: \((?P<parts>[^)]*)\))?"
)
PART = re.compile(r"(?P<name>[a-z ]+) (?P<seconds>[\d.]+) s")
FIRST = re.compile(r"task \d+: first transaction (?P<after>[\d.]+) s after ready: (?P<detail>.*)$")
STAMP = re.compile(r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3})\]")


@dataclass(kw_only=True)
class Restore:
    """The ready lines of one worker log, summed; `lines` counts them (one per rebuild)."""

    lines: int = 0
    tasks: list[int] = field(default_factory=list)
    records: int | None = None
    size: int | None = None
    events: int = 0
    seconds: float = 0.0
    first_line: float | None = None
    ready_at: float | None = None
    parts: dict[str, float] = field(default_factory=dict)
    """Where the rebuilds' time went, by the names the ready line gives (summed over lines)."""
    first_transaction: str | None = None
    """The last rebuild's first transaction: how long after ready, and what it took."""
    first_transaction_at: float | None = None


def restored(log: Path, since: float | None = None) -> Restore:
    """The ready lines of a worker log (those logged from `since` on, a wall-clock time, if given),
    and the wall-clock times of its first line and last one.

    `records` stays None when no line reports state records (an engine that only refolds).
    """
    found = Restore()
    for line in log.read_text(errors="replace").splitlines():
        stamp = STAMP.match(line)
        at = _epoch(stamp.group(1)) if stamp else None
        if since is not None and (at is None or at < since):
            continue
        if found.first_line is None and at is not None:
            found.first_line = at
        first = FIRST.search(line)
        if first is not None:
            found.first_transaction = f"{first['after']} s after ready ({first['detail'].strip()})"
            found.first_transaction_at = at
        ready = READY.search(line)
        if ready is None:
            continue
        found.lines += 1
        found.tasks += [int(t) for t in ready["tasks"].split(",") if t.strip()]
        if ready["records"] is not None:
            found.records = (found.records or 0) + int(ready["records"])
            found.size = (found.size or 0) + int(ready["bytes"])
        found.events += int(ready["events"])
        found.seconds += float(ready["seconds"])
        for part in PART.finditer(ready["parts"] or ""):
            name = part["name"].strip()
            found.parts[name] = found.parts.get(name, 0.0) + float(part["seconds"])
        found.ready_at = at
    return found


def _epoch(stamp: str) -> float:
    return datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S,%f").timestamp()
