"""The dashboard as a rich renderable (terminals) or as one plain line (logs, CI)."""

from __future__ import annotations

from collections.abc import Mapping

from rich.console import Group, JustifyMethod
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from services.view.state import Dashboard

STATUS_STYLE = {
    "betting": "green",
    "closed": "yellow",
    "reshaking": "magenta",
    "suspended": "bold red",
    "result": "cyan",
    "cancelled": "red",
}


def _counts(counter: Mapping[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(counter.items())) or "none"


def _workers(workers: Mapping[str, str]) -> str:
    return ", ".join(f"{name} {state}" for name, state in workers.items())


def _house(board: Dashboard, currency: str) -> str:
    staked, paid = board.staked[currency], board.paid[currency]
    return f"{currency} staked {staked} paid {paid} ({staked - paid:+d})"


def plain(board: Dashboard, now: float, elapsed: float, workers: Mapping[str, str]) -> str:
    """One line: totals, rates, pending bets, rejections and workers."""
    rounds = sum(t.rounds for t in board.tables.values())
    return (
        f"[{elapsed:6.0f}s] settlements {board.settlements} "
        f"({board.settle_rate.per_second(now):.1f}/s) refunds {sum(board.refunds.values())} "
        f"({board.refund_rate.per_second(now):.1f}/s) pending {board.pending_bets} "
        f"rejected {sum(board.rejected.values())} tables {len(board.tables)} rounds {rounds} "
        f"| {_workers(workers)}"
    )


def rich_view(
    board: Dashboard, now: float, elapsed: float, workers: Mapping[str, str], title: str
) -> Group:
    """Totals on top, then a row per table with its round status and latest results."""
    summary = Table.grid(padding=(0, 2))
    summary.add_column(style="bold")
    summary.add_column()
    summary.add_row(
        "settlements",
        f"{board.settlements}  ({board.settle_rate.per_second(now):.1f}/s)",
    )
    summary.add_row(
        "refunds",
        f"{sum(board.refunds.values())}  ({board.refund_rate.per_second(now):.1f}/s)  "
        f"{_counts(board.refunds)}",
    )
    summary.add_row(
        "pending bets",
        f"{board.pending_bets}  "
        + "  ".join(f"{w}: {'?' if n is None else n}" for w, n in board.pending.items()),
    )
    summary.add_row(
        "corrections",
        f"{board.corrections['corrected']} corrected, {board.corrections['voided']} voided  "
        f"({board.adjustments} adjustments)",
    )
    summary.add_row("rejections", f"{sum(board.rejected.values())}  {_counts(board.rejected)}")
    summary.add_row(
        "house (minor units)",
        "  ".join(_house(board, c) for c in sorted(board.staked)) or "nothing settled yet",
    )
    summary.add_row("processes", _workers(workers))
    tables = Table(expand=True, show_lines=False)
    columns: tuple[tuple[str, JustifyMethod], ...] = (
        ("table", "left"),
        ("game", "left"),
        ("round", "left"),
        ("status", "left"),
        ("bets", "right"),
        ("rounds", "right"),
        ("settled", "right"),
        ("refunds", "right"),
        ("corr/void", "right"),
        ("latest results (newest first)", "left"),
    )
    for name, justify in columns:
        wrap = name.startswith("latest")
        tables.add_column(name, justify=justify, no_wrap=not wrap)
    for t in sorted(board.tables.values(), key=lambda t: t.table_id):
        tables.add_row(
            t.table_id,
            t.game,
            t.round_id.rsplit("-", 1)[-1],
            Text(t.status, style=STATUS_STYLE.get(t.status, "")),
            str(t.bets),
            str(t.rounds),
            str(t.settled),
            str(t.refunded),
            f"{t.corrected}/{t.voided}",
            "  ".join(t.results),
        )
    header = Panel(summary, title=f"{title}  [{elapsed:.0f}s]", title_align="left")
    return Group(header, tables)
