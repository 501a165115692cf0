"""A simulated clock: the time is whatever the simulation set last, never the wall clock."""

from __future__ import annotations

from datetime import datetime, timedelta


class SimClock:
    """A settable clock, read by the round builders for `at`."""

    def __init__(self, start: datetime) -> None:
        if start.tzinfo is None:
            raise ValueError("the simulation start needs a time zone, e.g. 2026-01-01T12:00:00Z")
        self.start = start
        self.now = start

    def set(self, seconds: float) -> None:
        """Move to `seconds` after the start (milliseconds kept, the rest dropped)."""
        self.now = self.start + timedelta(milliseconds=round(seconds * 1000))

    def __call__(self) -> datetime:
        return self.now
