"""The report's quarter hours added up into the gaming days of a period, and the period's totals
(pure)."""

from __future__ import annotations

import msgspec

from services.reports.days import UTC_DAYS, Period
from services.reports.figures import Report, add_money, add_rounds


def daily(report: Report, period: Period = UTC_DAYS) -> Report:
    """The figures of a report kept per quarter hour (`figures.Report`), per gaming day of the
    period: the rows of each table, game, gaming day (and currency) added up, those of the days
    outside the period left out; a correction or void in the gaming day of its own `at`."""
    days = Report()
    places: dict[str, str | None] = {}

    def place(quarter: str) -> str | None:
        """The quarter's gaming day, None outside the period (each quarter worked out once)."""
        if quarter not in places:
            day = period.day_of(quarter)
            places[quarter] = day if period.holds(day) else None
        return places[quarter]

    for (table_id, game, quarter, currency), money in report.money.items():
        if (day := place(quarter)) is not None:
            add_money(days.money, (table_id, game, day, currency), money)
    for (table_id, game, quarter), rounds in report.rounds.items():
        if (day := place(quarter)) is not None:
            add_rounds(days.rounds, (table_id, game, day), rounds)
    for correction in report.corrections:
        if (day := place(correction.day)) is not None:
            days.corrections.append(msgspec.structs.replace(correction, day=day))
    return days


def totals(days: Report, period: Period = UTC_DAYS) -> Report:
    """The period's totals per table, game (and currency) of a `daily` report, their day the
    ISO 8601 interval of the days they cover: the period's bounds, else its first and last day
    with figures."""
    seen = sorted(
        {key[2] for key in days.rounds} | {key[2] for key in days.money}, key=lambda d: (len(d), d)
    )
    if not seen:
        return Report()
    first = seen[0] if period.start is None else period.start.isoformat()
    last = seen[-1] if period.to is None else period.to.isoformat()
    span = f"{first}/{last}"
    whole = Report()
    for (table_id, game, _, currency), money in days.money.items():
        add_money(whole.money, (table_id, game, span, currency), money)
    for (table_id, game, _), rounds in days.rounds.items():
        add_rounds(whole.rounds, (table_id, game, span), rounds)
    return whole
