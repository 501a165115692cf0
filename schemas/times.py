"""The instants of the events' `at` texts, read exactly as the fold accepts them (RFC 3339: `T`,
`t` or a space between date and time, `Z`, `z` or an offset, a fraction of any length, a leap
second), for the read side's order and the report's days alike: one reading, never a second.

A leap second (`23:59:60`) is its minute's last second, `:59` (as java.time reads one); a fraction
is cut at microseconds. A UTC day before 0001-01-01 or after 9999-12-31, which only an offset can
reach from the first or the last day (`0001-01-01T00:30:00+01:00`), is written as ISO 8601's
expanded years do: `0000-12-31`, `10000-01-01`.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from typing import Final

_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND: Final = timedelta(microseconds=1)
_EPOCH_DAY: Final = date(1970, 1, 1).toordinal()
_DAY: Final = 86_400_000_000
_MINUTE: Final = 60_000_000
_FIRST, _LAST = date.min.toordinal(), date.max.toordinal()


def micros(instant: datetime) -> int:
    """Microseconds since the epoch of a zoned instant, exactly (no float)."""
    return (instant - _EPOCH) // _MICROSECOND


def utc_micros(text: str) -> int | None:
    """Microseconds since 1970-01-01T00:00:00Z of an RFC 3339 timestamp; None when the text is
    not one (no zone, not a date)."""
    value = text.strip().upper().replace(" ", "T").replace("Z", "+00:00")
    day, _, rest = value.partition("T")
    clock, sign, zone = rest, "", ""
    for mark in ("+", "-"):
        if mark in rest:
            clock, sign, zone = rest.partition(mark)
    whole, _, fraction = clock.partition(".")
    whole = whole[:6] + "59" if whole.endswith(":60") else whole
    digits = f".{fraction[:6]:0<6}" if fraction else ""
    try:
        instant = datetime.fromisoformat(f"{day}T{whole}{digits}{sign}{zone}")
    except ValueError:
        return None
    return None if instant.tzinfo is None else micros(instant)


def utc_day(text: str) -> str:
    """The UTC calendar day (YYYY-MM-DD) of an RFC 3339 timestamp; ValueError if not one."""
    return _day(_instant(text) // _DAY)


def utc_quarter(text: str) -> str:
    """The quarter hour (UTC) an RFC 3339 timestamp falls in, as the UTC day and the quarter's
    first minute: `2026-03-29T04:45Z`; ValueError if not one. Its texts sort as their instants
    (years 1 to 9999)."""
    found = _instant(text)
    minute = found % _DAY // _MINUTE // 15 * 15
    return f"{_day(found // _DAY)}T{minute // 60:02d}:{minute % 60:02d}Z"


def _instant(text: str) -> int:
    found = utc_micros(text)
    if found is None:
        raise ValueError(f"not an RFC 3339 timestamp with a zone: {text!r}")
    return found


def _day(days: int) -> str:
    """The UTC day `days` after 1970-01-01, in ISO 8601 (expanded years outside 1 to 9999)."""
    ordinal = _EPOCH_DAY + days
    if ordinal < _FIRST:
        return "0000-12-31"
    if ordinal > _LAST:
        return "10000-01-01"
    return date.fromordinal(ordinal).isoformat()
