"""A bet's `at` as the read side keeps it: exact microseconds to sort by, and its RFC 3339 text."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

from hypothesis import given
from hypothesis import strategies as st

from services.history.rows import stamp

ZONES = st.one_of(
    st.just(UTC),
    st.integers(-1439, 1439).map(lambda minutes: timezone(timedelta(minutes=minutes))),
)
INSTANTS = st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30)).flatmap(
    lambda naive: ZONES.map(lambda zone: naive.replace(tzinfo=zone))
)


@given(INSTANTS)
def test_a_bets_time_sorts_by_its_exact_microseconds_and_reads_as_its_iso_text(
    instant: datetime,
) -> None:
    since = instant - datetime(1970, 1, 1, tzinfo=UTC)
    exact = (since.days * 86_400 + since.seconds) * 1_000_000 + since.microseconds
    assert stamp(instant) == (exact, instant.isoformat().replace("+00:00", "Z"))


@given(st.lists(INSTANTS, min_size=2, max_size=50))
def test_bets_of_one_second_each_read_as_their_own_text(instants: list[datetime]) -> None:
    """Remembered by second and zone: the fractions and zones of one second never mix."""
    spread = [
        instants[0].replace(microsecond=n) if n % 2 else instants[0].astimezone(other.tzinfo)
        for n, other in enumerate(instants)
    ]
    for instant in spread + instants:
        assert stamp(instant)[1] == instant.isoformat().replace("+00:00", "Z")


def test_a_bets_time_at_the_ends_of_the_calendar_reads_as_its_own_text() -> None:
    """Its wall clock is in range even where its UTC is not (the year 0 or 10000)."""
    for text in ("0001-01-01T00:30:00.500000+01:00", "9999-12-31T23:59:59-01:00"):
        instant = datetime.fromisoformat(text)
        assert stamp(instant)[1] == text
