"""The instants of `at` texts, read once for the read side's order and the report's days: every
spelling the fold accepts, a leap second, and the days only an offset reaches past year 9999."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from schemas.times import micros, utc_day, utc_micros

NOON = 1_795_953_600_000_000  # 2026-11-29T12:00:00Z


@pytest.mark.parametrize(
    ("text", "day", "at"),
    [
        ("2026-11-29T12:00:00Z", "2026-11-29", NOON),
        ("2026-11-29t12:00:00z", "2026-11-29", NOON),
        ("2026-11-29 12:00:00Z", "2026-11-29", NOON),
        ("2026-11-29T13:00:00+01:00", "2026-11-29", NOON),
        ("2026-11-29T23:30:00-01:00", "2026-11-30", NOON + 12 * 3600 * 10**6 + 30 * 60 * 10**6),
        ("2026-11-30T00:30:00+01:00", "2026-11-29", NOON + 11 * 3600 * 10**6 + 30 * 60 * 10**6),
        ("2026-11-29T12:00:00.5Z", "2026-11-29", NOON + 500_000),
        ("2026-11-29T12:00:00.1234567Z", "2026-11-29", NOON + 123_456),
        ("2026-12-31T23:59:60Z", "2026-12-31", 1_798_761_599_000_000),
        ("2026-12-31T23:59:60.25Z", "2026-12-31", 1_798_761_599_250_000),
        ("0001-01-01T00:00:00Z", "0001-01-01", -62_135_596_800_000_000),
        ("0001-01-01T00:30:00+01:00", "0000-12-31", -62_135_598_600_000_000),
        ("9999-12-31T23:59:59-01:00", "10000-01-01", 253_402_304_399_000_000),
    ],
)
def test_a_timestamp_reads_as_its_utc_microseconds_and_day(text: str, day: str, at: int) -> None:
    assert utc_micros(text) == at
    assert utc_day(text) == day


@pytest.mark.parametrize("text", ["2026-11-29T12:00:00", "yesterday", "", "2026-02-30T00:00:00Z"])
def test_a_text_with_no_zone_or_no_date_is_not_an_instant(text: str) -> None:
    assert utc_micros(text) is None
    with pytest.raises(ValueError, match="not an RFC 3339 timestamp"):
        utc_day(text)


@given(
    st.datetimes(
        min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30), timezones=st.just(UTC)
    ),
    st.integers(-23 * 60 - 59, 23 * 60 + 59),
)
def test_any_instant_in_any_offset_reads_as_python_reads_it(
    instant: datetime, minutes: int
) -> None:
    local = instant.astimezone(timezone(timedelta(minutes=minutes)))
    text = local.isoformat()
    assert utc_micros(text) == micros(instant)
    assert utc_day(text) == instant.date().isoformat()
    assert utc_day(text.replace("T", "t").replace("+00:00", "z")) == instant.date().isoformat()
