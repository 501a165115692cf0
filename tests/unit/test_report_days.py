"""Gaming days: a day starting 06:00 in Malta across both changes of the clocks (23 and 25 hours),
worked by hand; the rows of any period's days add up to its totals; the default day is the UTC
day; a gaming day of any quarter-hour start in any zone holds exactly the instants between its
start and the next day's."""

from __future__ import annotations

import csv
import io
import json
from collections import Counter
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schemas.times import utc_day, utc_quarter
from services.reports.command import build
from services.reports.days import Period, PeriodError, parse_starts, parse_zone
from services.reports.figures import Report
from services.reports.render import as_csv, as_dict, as_json, as_text
from tests.unit.builders import bet, round_event

MALTA = "Europe/Malta"
ROUNDS = {
    # spring: the clocks go from 02:00 CET to 03:00 CEST on 2026-03-29 (01:00Z)
    "S1": ("2026-03-28T04:59:00Z", "2026-03-27"),  # 05:59 CET
    "S2": ("2026-03-28T05:00:00Z", "2026-03-28"),  # 06:00 CET: 28 March starts
    "S3": ("2026-03-29T03:59:59Z", "2026-03-28"),  # 05:59:59 CEST: 28 March's last second
    "S4": ("2026-03-29T04:00:00Z", "2026-03-29"),  # 06:00 CEST: 23 hours after 28 March began
    # autumn: the clocks go from 03:00 CEST to 02:00 CET on 2026-10-25 (01:00Z)
    "A1": ("2026-10-24T03:59:00Z", "2026-10-23"),  # 05:59 CEST
    "A2": ("2026-10-24T04:00:00Z", "2026-10-24"),  # 06:00 CEST: 24 October starts
    "A3": ("2026-10-25T04:59:00Z", "2026-10-24"),  # 05:59 CET
    "A4": ("2026-10-25T05:00:00Z", "2026-10-25"),  # 06:00 CET: 25 hours after 24 October began
}
CORRECTED_AT = "2026-03-29T04:30:00Z"  # S3 corrected 06:30 CEST, in 29 March


def _lines() -> list[bytes]:
    """Each round one winning big bet of 10 x its number (S1 10, S2 20, ... A4 80); S3 (won
    with 4-5-6) corrected to 1-2-3 on 29 March, its bet then losing."""
    lines = []
    for n, (round_id, (at, _)) in enumerate(ROUNDS.items(), start=1):
        lines += [
            round_event("opened", round_id, game="sicbo", at=at),
            bet(1, "big", stake=10 * n, round_id=round_id, at=at),
            round_event("betting_closed", round_id, last_seq=1, at=at),
            round_event("result", round_id, dice=[4, 5, 6], at=at),
        ]
    corrected = round_event(
        "corrected", "S3", dice=[1, 2, 3], reason="misread", authorized_by="ana", at=CORRECTED_AT
    )
    return [*lines, corrected]


def test_a_malta_gaming_day_from_6am_lasts_23_hours_in_march_and_25_in_october() -> None:
    period = Period(starts=time(6), zone=MALTA)
    spring = Period(date(2026, 3, 28), date(2026, 3, 28), time(6), MALTA).quarters()
    autumn = Period(date(2026, 10, 24), date(2026, 10, 24), time(6), MALTA).quarters()
    assert spring == ("2026-03-28T05:00Z", "2026-03-29T04:00Z")
    assert autumn == ("2026-10-24T04:00Z", "2026-10-25T05:00Z")
    for round_id, (at, day) in ROUNDS.items():
        assert period.day_of(utc_quarter(at)) == day, round_id


@pytest.mark.parametrize(
    ("quarter", "day"),
    [
        ("2026-10-25T00:15Z", "2026-10-24"),  # 02:15 CEST
        ("2026-10-25T00:30Z", "2026-10-25"),  # 02:30 CEST: the day starts
        ("2026-10-25T01:15Z", "2026-10-25"),  # 02:15 CET, the hour again: the day goes on
        ("2026-03-29T00:45Z", "2026-03-28"),  # 01:45 CET
        ("2026-03-29T01:15Z", "2026-03-28"),  # 03:15 CEST: 02:30 never came
        ("2026-03-29T01:30Z", "2026-03-29"),  # 03:30 CEST: 02:30 read as CET, as zoneinfo does
    ],
)
def test_a_day_starting_in_the_hour_the_clocks_repeat_or_skip_starts_once(
    quarter: str, day: str
) -> None:
    assert Period(starts=time(2, 30), zone=MALTA).day_of(quarter) == day


def test_rounds_land_in_their_malta_gaming_days_and_the_period_totals_are_their_sum() -> None:
    period = Period(date(2026, 3, 28), date(2026, 10, 24), time(6), MALTA)
    data = json.loads(as_json(build(_lines(), horizon=200), period))
    assert data["period"] == {
        "from": "2026-03-28",
        "to": "2026-10-24",
        "day_starts": "06:00",
        "tz": MALTA,
    }
    by_day = [(r["day"], r["results"], r["corrected"]) for r in data["rounds"]]
    assert by_day == [  # S1 (27 March) and A4 (25 October) are outside
        ("2026-03-28", 2, 0),  # S2, S3
        ("2026-03-29", 1, 1),  # S4, and S3's correction, in the day it was made
        ("2026-10-23", 1, 0),  # A1
        ("2026-10-24", 2, 0),  # A2, A3
    ]
    money = [(m["day"], m["stakes"], m["payouts"], m["adjustments"]) for m in data["money"]]
    assert money == [
        ("2026-03-28", 20 + 30, 2 * (20 + 30), 0),
        ("2026-03-29", 40, 2 * 40 - 2 * 30, 1),  # S3's bet lost on correction: -60
        ("2026-10-23", 50, 2 * 50, 0),
        ("2026-10-24", 60 + 70, 2 * (60 + 70), 0),
    ]
    [rounds_total] = data["totals"]["rounds"]
    [money_total] = data["totals"]["money"]
    assert rounds_total["day"] == money_total["day"] == "2026-03-28/2026-10-24"
    assert (rounds_total["results"], rounds_total["corrected"]) == (6, 1)
    for figure in ("bets", "stakes", "refunds", "payouts", "adjustments", "ggr"):
        assert money_total[figure] == sum(m[figure] for m in data["money"]), figure
    assert money_total["rtp_percent"] == "177.7778"  # 480 paid of 270 staked
    [correction] = data["corrections"]
    assert (correction["round_id"], correction["day"]) == ("S3", "2026-03-29")


def test_the_default_day_is_the_utc_day() -> None:
    data = as_dict(build(_lines(), horizon=200))
    assert data["period"] == {"from": None, "to": None, "day_starts": "00:00", "tz": "UTC"}
    assert [r["day"] for r in data["rounds"]] == sorted({utc_day(at) for at, _ in ROUNDS.values()})
    assert data["corrections"][0]["day"] == "2026-03-29"


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("6:00", "expected HH:MM"),
        ("24:00", "expected HH:MM"),
        ("06:10", "on a quarter hour"),
        ("06:00:00", "expected HH:MM"),
    ],
)
def test_a_day_start_that_is_not_a_quarter_hour_in_hh_mm_is_refused(
    text: str, problem: str
) -> None:
    with pytest.raises(PeriodError, match=problem):
        parse_starts(text)


@pytest.mark.parametrize("name", ["Europe/Atlantis", "", "../etc/passwd", "Europe", "CET/"])
def test_a_zone_zoneinfo_does_not_know_is_refused(name: str) -> None:
    with pytest.raises(PeriodError, match="no such zone"):
        parse_zone(name)


def test_a_period_that_ends_before_it_starts_is_refused() -> None:
    with pytest.raises(PeriodError, match="after its last"):
        Period(date(2026, 3, 2), date(2026, 3, 1))


def test_a_gaming_day_off_the_quarter_hours_of_a_local_mean_time_is_refused() -> None:
    """Amsterdam kept +00:19:32 until 1937: its midnight then fell inside a quarter."""
    with pytest.raises(PeriodError, match="not on a quarter hour"):
        Period(zone="Europe/Amsterdam").day_of("1930-06-01T12:00Z")


ZONES = (
    "UTC",
    MALTA,
    "America/St_Johns",  # -03:30, with summer time
    "Asia/Kathmandu",  # +05:45
    "Australia/Lord_Howe",  # +10:30, summer time of 30 minutes
    "Pacific/Chatham",  # +12:45 / +13:45
    "Pacific/Kiritimati",  # +14
    "America/Los_Angeles",
)
START = datetime(2026, 1, 1, tzinfo=UTC)
instants = st.integers(0, 366 * 24 * 3600 - 1).map(lambda s: START + timedelta(seconds=s))
periods = st.builds(
    lambda zone, quarter, first, days: (zone, time(quarter // 4, quarter % 4 * 15), first, days),
    st.sampled_from(ZONES),
    st.integers(0, 24 * 4 - 1),
    st.dates(date(2025, 12, 30), date(2027, 1, 2)),
    st.integers(0, 60),
)


def _gaming_day(instant: datetime, starts: time, zone: str) -> date:
    """The day d with start(d) <= instant < start(d + 1), each start found by zoneinfo alone."""

    def start(day: date) -> datetime:
        return datetime.combine(day, starts, tzinfo=ZoneInfo(zone)).astimezone(UTC)

    day = instant.date() - timedelta(days=2)
    while start(day + timedelta(days=1)) <= instant:
        day += timedelta(days=1)
    assert start(day) <= instant
    return day


def _report(rounds: list[tuple[datetime, int, str]]) -> Report:
    report = Report()
    for n, (instant, stake, currency) in enumerate(rounds):
        table_id, round_id, at = f"T{n % 3}", f"R{n}", instant.isoformat()
        report.opened(table_id, round_id, "sicbo")
        report.event("round.result", table_id, round_id, at, [4, 5, 6])
        report.settled(table_id, round_id, at, currency, stake, 2 * stake, "sicbo", "big", ())
    return report


rounds_strategy = st.lists(
    st.tuples(instants, st.integers(1, 10**6), st.sampled_from(["EUR", "THB"])), max_size=40
)


@settings(max_examples=150, deadline=None)
@given(rounds=rounds_strategy, chosen=periods)
def test_each_round_lands_in_its_gaming_day_and_the_days_add_up_to_the_period_totals(
    rounds: list[tuple[datetime, int, str]], chosen: tuple[str, time, date, int]
) -> None:
    zone, starts, first, length = chosen
    period = Period(first, first + timedelta(days=length), starts, zone)
    data = as_dict(_report(rounds), period)
    expected = Counter(
        (f"T{n % 3}", day.isoformat(), currency)
        for n, (instant, _, currency) in enumerate(rounds)
        if first <= (day := _gaming_day(instant, starts, zone)) <= period.to  # type: ignore[operator]
    )
    assert Counter(
        {(m["table_id"], m["day"], m["currency"]): m["bets"] for m in data["money"]}
    ) == (expected)
    totals = {(m["table_id"], m["currency"]): m for m in data["totals"]["money"]}
    assert set(totals) == {(t, c) for t, _, c in expected}
    for (table_id, currency), total in totals.items():
        rows = [m for m in data["money"] if (m["table_id"], m["currency"]) == (table_id, currency)]
        for figure in ("bets", "stakes", "payouts", "ggr"):
            assert total[figure] == sum(m[figure] for m in rows)
    for total in data["totals"]["rounds"]:
        rows = [r for r in data["rounds"] if r["table_id"] == total["table_id"]]
        assert total["results"] == sum(r["results"] for r in rows)


@settings(max_examples=100, deadline=None)
@given(rounds=rounds_strategy)
def test_the_default_gaming_day_gives_the_rows_of_the_utc_days(
    rounds: list[tuple[datetime, int, str]],
) -> None:
    data = as_dict(_report(rounds))
    expected = Counter(
        (f"T{n % 3}", instant.date().isoformat(), currency)
        for n, (instant, _, currency) in enumerate(rounds)
    )
    assert Counter(
        {(m["table_id"], m["day"], m["currency"]): m["bets"] for m in data["money"]}
    ) == (expected)
    stakes = Counter[tuple[str, str, str]]()
    for n, (instant, stake, currency) in enumerate(rounds):
        stakes[(f"T{n % 3}", instant.date().isoformat(), currency)] += stake
    assert {(m["table_id"], m["day"], m["currency"]): m["stakes"] for m in data["money"]} == stakes


def test_the_csv_and_the_text_carry_the_periods_days_and_totals() -> None:
    period = Period(date(2026, 3, 28), date(2026, 3, 29), time(6), MALTA)
    report = build(_lines(), horizon=200)
    sections = {
        part.split("\n", 1)[0]: list(csv.DictReader(io.StringIO(part.split("\n", 1)[1])))
        for part in as_csv(report, period).split("\n\n")
    }
    assert [m["day"] for m in sections["# money"]] == ["2026-03-28", "2026-03-29"]
    [total] = sections["# totals money"]
    assert (total["day"], total["stakes"], total["payouts"]) == (
        "2026-03-28/2026-03-29",
        "90",
        "120",
    )
    assert sections["# period"] == [
        {"from": "2026-03-28", "to": "2026-03-29", "day_starts": "06:00", "tz": MALTA}
    ]
    text = as_text(report, period)
    assert "Rounds per table, game and gaming day (from 06:00 Europe/Malta)" in text
    assert "Totals over the gaming days 2026-03-28 to 2026-03-29 (from 06:00 Europe/Malta)" in text
    assert "2026-03-28/2026-03-29       EUR     3      90" in text
