"""The report as text, CSV or JSON (pure formatting of `figures.Report`)."""

from __future__ import annotations

import csv
import io
from typing import Annotated, Any

import msgspec
from msgspec import Meta

from services.reports.daily import daily, totals
from services.reports.days import DEFAULT_STARTS, DEFAULT_ZONE, UTC_DAYS, Period
from services.reports.figures import Correction, Money, Report, Rounds, percent

MONEY_COLUMNS = (
    "table_id",
    "game",
    "day",
    "currency",
    "bets",
    "stakes",
    "refunds",
    "payouts",
    "adjustments",
    "ggr",
    "rtp_percent",
    "theoretical_rtp_percent",
)
ROUND_COLUMNS = ("table_id", "game", "day", "results", "cancelled", "corrected", "voided")


class MoneyRow(msgspec.Struct):
    """A row of the report's money: a table's, game's, day's (or period's) and currency's."""

    table_id: str
    game: str
    day: Annotated[str, Meta(description="the gaming day; of a total, FROM/TO (ISO 8601)")]
    currency: str
    bets: int
    stakes: int
    refunds: int
    payouts: Annotated[int, Meta(description="adjustments included")]
    adjustments: int
    ggr: Annotated[int, Meta(description="stakes - refunds - payouts")]
    rtp_percent: Annotated[str, Meta(description="payouts / (stakes - refunds); empty: none")]
    theoretical_rtp_percent: Annotated[str, Meta(description="the PAR sheet's, stake-weighted")]


class PeriodOut(msgspec.Struct, rename={"start": "from"}):
    """The gaming days reported: from and to inclusive (null: unbounded), each starting at
    day_starts in tz."""

    start: str | None
    to: str | None
    day_starts: str
    tz: str


class PeriodTotals(msgspec.Struct):
    """The period's figures per table, game (and currency), every gaming day added up."""

    rounds: list[Rounds]
    money: list[MoneyRow]


class ReportOut(msgspec.Struct):
    """The regulator's report: rows per table, game, gaming day (and currency), the period's
    totals, and every correction and void (in the gaming day of its own `at`)."""

    period: PeriodOut
    rounds: list[Rounds]
    money: list[MoneyRow]
    totals: PeriodTotals
    corrections: list[Correction]


def _money(row: Money) -> MoneyRow:
    return MoneyRow(
        table_id=row.table_id,
        game=row.game,
        day=row.day,
        currency=row.currency,
        bets=row.bets,
        stakes=row.stakes,
        refunds=row.refunds,
        payouts=row.payouts,
        adjustments=row.adjustments,
        ggr=row.ggr,
        rtp_percent=percent(row.rtp),
        theoretical_rtp_percent=percent(row.theoretical_rtp),
    )


def answer(report: Report, period: Period = UTC_DAYS) -> ReportOut:
    """The report (kept per quarter hour) over the period's gaming days: rows sorted by their
    keys, corrections by table, round and n."""
    days = daily(report, period)
    whole = totals(days, period)
    start, to = period.start, period.to
    return ReportOut(
        period=PeriodOut(
            start=None if start is None else start.isoformat(),
            to=None if to is None else to.isoformat(),
            day_starts=period.day_starts,
            tz=period.zone,
        ),
        rounds=[days.rounds[k] for k in sorted(days.rounds)],
        money=[_money(days.money[k]) for k in sorted(days.money)],
        totals=PeriodTotals(
            rounds=[whole.rounds[k] for k in sorted(whole.rounds)],
            money=[_money(whole.money[k]) for k in sorted(whole.money)],
        ),
        corrections=sorted(days.corrections, key=lambda c: (c.table_id, c.round_id, c.n)),
    )


def as_dict(report: Report, period: Period = UTC_DAYS) -> dict[str, Any]:
    """The report over the period as plain data (`answer`)."""
    found: dict[str, Any] = msgspec.to_builtins(answer(report, period))
    return found


def as_json(report: Report, period: Period = UTC_DAYS) -> str:
    return (
        msgspec.json.format(msgspec.json.encode(answer(report, period)), indent=2).decode() + "\n"
    )


CORRECTION_COLUMNS = (
    "table_id",
    "round_id",
    "game",
    "day",
    "at",
    "n",
    "cause",
    "reason",
    "authorized_by",
    "before",
    "after",
)
PERIOD_COLUMNS = ("from", "to", "day_starts", "tz")


def as_csv(report: Report, period: Period = UTC_DAYS) -> str:
    """CSV sections (rounds, money, corrections, the totals' rounds and money, the period), each
    with its header, a blank line apart."""
    data = as_dict(report, period)
    out = io.StringIO()
    sections = [
        ("rounds", ROUND_COLUMNS, data["rounds"]),
        ("money", MONEY_COLUMNS, data["money"]),
        ("corrections", CORRECTION_COLUMNS, data["corrections"]),
        ("totals rounds", ROUND_COLUMNS, data["totals"]["rounds"]),
        ("totals money", MONEY_COLUMNS, data["totals"]["money"]),
        ("period", PERIOD_COLUMNS, [data["period"]]),
    ]
    for n, (name, columns, rows) in enumerate(sections):
        if n:
            out.write("\n")
        out.write(f"# {name}\n")
        writer = csv.DictWriter(out, fieldnames=columns, lineterminator="\n")
        writer.writeheader()
        for row in rows:
            writer.writerow({c: _cell(row.get(c)) for c in columns})
    return out.getvalue()


def _cell(value: object) -> object:
    if isinstance(value, list):
        return "-".join(map(str, value))
    return "" if value is None else value


def as_text(report: Report, period: Period = UTC_DAYS) -> str:
    data = as_dict(report, period)
    utc = period.zone == DEFAULT_ZONE and period.day_starts == DEFAULT_STARTS
    unit, note = (
        ("UTC day", "") if utc else ("gaming day", f" (from {period.day_starts} {period.zone})")
    )
    spans = {row["day"] for row in data["totals"]["rounds"] + data["totals"]["money"]}
    span = spans.pop().replace("/", " to ") if spans else "none"
    lines = [f"Rounds per table, game and {unit}{note}"]
    lines += _table(ROUND_COLUMNS, data["rounds"])
    lines += ["", f"Money per table, game, {unit} and currency{note} (minor units; RTP in percent)"]
    lines += _table(MONEY_COLUMNS, data["money"])
    lines += ["", f"Totals over the {unit}s {span}{note}: rounds per table and game"]
    lines += _table(ROUND_COLUMNS, data["totals"]["rounds"])
    lines += ["", "Totals: money per table, game and currency"]
    lines += _table(MONEY_COLUMNS, data["totals"]["money"])
    lines += ["", "Corrections and voids"]
    if not data["corrections"]:
        lines.append("  none")
    for c in data["corrections"]:
        before = _cell(c.get("before")) or "?"
        after = _cell(c.get("after")) or "void"
        lines.append(
            f"  {c['at']}  {c['table_id']} {c['round_id']} #{c['n']} {c['cause']}: "
            f"{before} -> {after}  authorised by {c['authorized_by']}: {c['reason']}"
        )
    return "\n".join(lines) + "\n"


def _table(columns: tuple[str, ...], rows: list[dict[str, Any]]) -> list[str]:
    cells = [[str(_cell(row.get(c))) for c in columns] for row in rows]
    widths = [max([len(c), *(len(r[i]) for r in cells)]) for i, c in enumerate(columns)]
    head = "  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True))
    body = ["  ".join(v.rjust(w) for v, w in zip(r, widths, strict=True)) for r in cells]
    return ["  " + head, *("  " + b for b in body)] if rows else ["  none"]
