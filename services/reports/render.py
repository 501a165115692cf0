"""The report as text, CSV or JSON (pure formatting of `figures.Report`)."""

from __future__ import annotations

import csv
import io
from typing import Any

import msgspec

from services.reports.figures import Money, Report, percent

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


def _money(row: Money) -> dict[str, Any]:
    return {
        "table_id": row.table_id,
        "game": row.game,
        "day": row.day,
        "currency": row.currency,
        "bets": row.bets,
        "stakes": row.stakes,
        "refunds": row.refunds,
        "payouts": row.payouts,
        "adjustments": row.adjustments,
        "ggr": row.ggr,
        "rtp_percent": percent(row.rtp),
        "theoretical_rtp_percent": percent(row.theoretical_rtp),
    }


def as_dict(report: Report) -> dict[str, Any]:
    """The report as plain data: rows sorted by their keys, corrections by table, round and n."""
    return {
        "rounds": [msgspec.to_builtins(report.rounds[k]) for k in sorted(report.rounds)],
        "money": [_money(report.money[k]) for k in sorted(report.money)],
        "corrections": [
            msgspec.to_builtins(c)
            for c in sorted(report.corrections, key=lambda c: (c.table_id, c.round_id, c.n))
        ],
    }


def as_json(report: Report) -> str:
    return msgspec.json.format(msgspec.json.encode(as_dict(report)), indent=2).decode() + "\n"


def as_csv(report: Report) -> str:
    """Three CSV sections (rounds, money, corrections), each with its header, a blank line apart."""
    data = as_dict(report)
    out = io.StringIO()
    sections = [
        ("rounds", ROUND_COLUMNS, data["rounds"]),
        ("money", MONEY_COLUMNS, data["money"]),
        (
            "corrections",
            (
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
            ),
            data["corrections"],
        ),
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


def as_text(report: Report) -> str:
    data = as_dict(report)
    lines = ["Rounds per table, game and UTC day"]
    lines += _table(ROUND_COLUMNS, data["rounds"])
    lines += ["", "Money per table, game, UTC day and currency (minor units; RTP in percent)"]
    lines += _table(MONEY_COLUMNS, data["money"])
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
