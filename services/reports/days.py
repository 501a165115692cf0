"""Gaming days and the period a report covers (pure).

A gaming day starts at `starts` (wall-clock time) in the zone `zone` and ends where the next one
starts; it is named by the local date on which it starts, so around a change of the clocks it
lasts 23 or 25 hours. A wall time the zone repeats (the clocks go back) starts the day at its
first occurrence; a wall time it skips (the clocks go forward) is read with the offset before the
skip (zoneinfo's `fold=0`). The default, 00:00 UTC, makes the UTC days.

The figures are kept per quarter hour (UTC, `schemas.times.utc_quarter`) and added up into gaming
days here: every zone's offset today is a whole number of quarter hours, and a gaming day starts
on a quarter hour, so each quarter lies in one gaming day. A day that would start inside a
quarter (a zone's local mean time of before 1900-odd) is refused, not shared out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from functools import lru_cache
from typing import Final
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

DEFAULT_STARTS: Final = "00:00"
DEFAULT_ZONE: Final = "UTC"
_STARTS: Final = re.compile(r"([01][0-9]|2[0-3]):([0-5][0-9])")
STARTS_PATTERN: Final = r"^([01][0-9]|2[0-3]):(00|15|30|45)$"
ZONE_PATTERN: Final = r"^[A-Za-z0-9_+\-]+(/[A-Za-z0-9_+\-]+)*$"


class PeriodError(ValueError):
    """A period, start of day or zone that cannot be used; its text says why."""


def parse_starts(text: str) -> time:
    """`HH:MM` (24-hour) on a quarter hour."""
    found = _STARTS.fullmatch(text)
    if found is None:
        raise PeriodError(f"day starts {text!r}: expected HH:MM, 00:00 to 23:45")
    hour, minute = int(found[1]), int(found[2])
    if minute % 15:
        raise PeriodError(
            f"day starts {text!r}: on a quarter hour (:00, :15, :30 or :45), as the figures "
            "are kept by quarter hours"
        )
    return time(hour, minute)


def parse_zone(name: str) -> str:
    """An IANA time zone name zoneinfo knows (`Europe/Malta`, `UTC`)."""
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError) as error:
        raise PeriodError(
            f"time zone {name!r}: no such zone (an IANA name such as Europe/Malta, or UTC)"
        ) from error
    return name


def parse_day(text: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError as error:
        raise PeriodError(f"{text!r} is no date (YYYY-MM-DD)") from error


@dataclass(frozen=True)
class Period:
    """The gaming days from `start` through `to` (inclusive; None: unbounded) that start at
    `starts` in `zone`."""

    start: date | None = None
    to: date | None = None
    starts: time = time(0)
    zone: str = DEFAULT_ZONE

    def __post_init__(self) -> None:
        if self.start is not None and self.to is not None and self.start > self.to:
            raise PeriodError(f"the period's first day {self.start} is after its last {self.to}")
        if self.starts.minute % 15 or self.starts.second or self.starts.microsecond:
            raise PeriodError(f"day starts {self.starts}: not on a quarter hour")
        parse_zone(self.zone)

    @property
    def day_starts(self) -> str:
        return self.starts.strftime("%H:%M")

    def day_of(self, quarter: str) -> str:
        """The gaming day (YYYY-MM-DD) a quarter hour (`utc_quarter`) lies in."""
        return _day_of(quarter, self.starts, self.zone)

    def holds(self, day: str) -> bool:
        """Whether the gaming day is in the period."""
        key = _order(day)
        return (self.start is None or key >= _order(self.start.isoformat())) and (
            self.to is None or key <= _order(self.to.isoformat())
        )

    def quarters(self) -> tuple[str | None, str | None]:
        """The first quarter hour of the period and the first after it (None: unbounded, or
        beyond the years datetime reaches): the figures to read."""
        first = None if self.start is None else _quarter_starting(self.start, self)
        after = None
        if self.to is not None and self.to < date.max:
            after = _quarter_starting(self.to + timedelta(days=1), self)
        return first, after


UTC_DAYS: Final = Period()
"""Every UTC day: the report as it was before gaming days."""


def _order(day: str) -> tuple[int, str]:
    """A day's text in the order of days (`10000-01-01` after `9999-12-31`)."""
    return len(day), day


def _quarter_starting(day: date, period: Period) -> str | None:
    try:
        instant = _start(day, period.starts, period.zone)
    except OverflowError:
        return None
    minute = instant.hour * 60 + instant.minute // 15 * 15
    return f"{instant.date().isoformat()}T{minute // 60:02d}:{minute % 60:02d}Z"


@lru_cache(maxsize=4096)
def _start(day: date, starts: time, zone: str) -> datetime:
    """The instant (UTC) the gaming day starts."""
    return datetime.combine(day, starts, tzinfo=ZoneInfo(zone)).astimezone(UTC)


@lru_cache(maxsize=65536)
def _day_of(quarter: str, starts: time, zone: str) -> str:
    utc_day = quarter.partition("T")[0]
    if zone == DEFAULT_ZONE and starts == time(0):
        return utc_day
    try:
        instant = datetime.fromisoformat(quarter.removesuffix("Z") + "+00:00")
        shift = timedelta(hours=starts.hour, minutes=starts.minute)
        day = (instant.astimezone(ZoneInfo(zone)).replace(tzinfo=None) - shift).date()
        if instant < _start(day, starts, zone):
            day -= timedelta(days=1)
        elif instant >= _start(day + timedelta(days=1), starts, zone):
            day += timedelta(days=1)
        _on_a_quarter(day, starts, zone)
        _on_a_quarter(day + timedelta(days=1), starts, zone)
    except (OverflowError, ValueError) as error:
        if isinstance(error, PeriodError):
            raise
        return utc_day  # a quarter of year 0 or 10000, or next to them: its UTC day
    return day.isoformat()


def _on_a_quarter(day: date, starts: time, zone: str) -> None:
    instant = _start(day, starts, zone)
    if instant.minute % 15 or instant.second or instant.microsecond:
        raise PeriodError(
            f"the gaming day {day} starts at {instant.isoformat()}, not on a quarter hour "
            f"(the zone {zone}'s offset then): the figures are kept by quarter hours"
        )
