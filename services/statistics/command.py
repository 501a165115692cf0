"""`croupier integrity FILE...`: the outcome integrity tests of a replay's input files, through
the very same fold as `croupier replay` (docs/CONTRACT.md, "Outcome integrity")."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TextIO

import msgspec

from services.settlement.fold import Fold
from services.settlement.replay import journaled, lines
from services.signing.signature import NO_KEYS, TableKeys
from services.statistics.counted import Counted
from services.statistics.integrity import (
    ALARM,
    DEFAULT,
    WATCH,
    WINDOW,
    Examined,
    Finding,
    Thresholds,
    examine,
)


def arguments(parser: argparse.ArgumentParser) -> None:
    """The command's files and options (the archive's range and the tables' keys are added by
    the command line, as for the other commands that fold inputs)."""
    parser.add_argument("files", nargs="*", metavar="FILE", help="JSON Lines file, or - for stdin")
    parser.add_argument(
        "--window",
        type=int,
        default=WINDOW,
        help=f"the last N counted rounds of each scope are tested (default {WINDOW})",
    )
    parser.add_argument(
        "--alarm",
        type=float,
        default=ALARM,
        help=f"a p-value below this raises the alarm (default {ALARM:g})",
    )
    parser.add_argument(
        "--watch",
        type=float,
        default=WATCH,
        help=f"a p-value below this (and not below --alarm) is a watch (default {WATCH:g})",
    )
    parser.add_argument(
        "--json", action="store_true", help="JSON Lines, one object per scope and test"
    )
    parser.add_argument(
        "--html",
        metavar="FILE",
        help="also write the figures and each test's chart (counts against the fair counts) as "
        "one HTML page to FILE",
    )


def counted(source: Iterable[bytes], *, horizon: int, keys: TableKeys = NO_KEYS) -> Counted:
    """Fold every line; the rounds that count are those the fold's accepted round events leave
    with a result."""
    found = Counted()
    for inputs, _ in journaled(source, Fold(horizon=horizon, journal=True, keys=keys)):
        for event, _ in inputs:
            found.accept(event)
    return found


def findings(
    source: Iterable[bytes],
    *,
    window: int = WINDOW,
    thresholds: Thresholds = DEFAULT,
    horizon: int,
    keys: TableKeys = NO_KEYS,
) -> list[Finding]:
    """Every test of every scope of the rounds the lines leave counted."""
    found = examined(source, window=window, thresholds=thresholds, horizon=horizon, keys=keys)
    return [e.finding for e in found]


def examined(
    source: Iterable[bytes],
    *,
    window: int = WINDOW,
    thresholds: Thresholds = DEFAULT,
    horizon: int,
    keys: TableKeys = NO_KEYS,
) -> list[Examined]:
    """`findings`, each with the counts it tested."""
    rounds = counted(source, horizon=horizon, keys=keys).rounds()
    return examine(rounds, window, thresholds)


def as_json(found: Sequence[Finding]) -> bytes:
    """JSON Lines, one finding a line, fields in the contract's order."""
    return msgspec.json.Encoder().encode_lines(found)


def as_text(found: Sequence[Finding]) -> str:
    """One aligned line per scope and test."""
    if not found:
        return "no round with a result: nothing to test\n"
    rows = [
        (
            f.scope,
            f.id,
            f.game,
            f.test,
            f"{f.rounds} rounds",
            f"chi2 {f.statistic:.2f}",
            f"df {f.df}",
            f"p {f.p_value:.3g}",
            f.verdict.upper() if f.verdict in ("alarm", "watch") else f.verdict,
        )
        for f in found
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    right = {4, 5}
    return "".join(
        "  ".join(
            cell.rjust(widths[i]) if i in right else cell.ljust(widths[i])
            for i, cell in enumerate(row)
        ).rstrip()
        + "\n"
        for row in rows
    )


def main(
    paths: list[str],
    *,
    window: int,
    thresholds: Thresholds,
    as_lines: bool,
    horizon: int,
    keys: TableKeys = NO_KEYS,
    html: str | None = None,
    out: TextIO | None = None,
) -> int:
    """Print the findings (standard output by default): aligned lines, or JSON Lines; with
    `html`, write the page too."""
    out = sys.stdout if out is None else out
    try:
        found = examined(
            lines(paths), window=window, thresholds=thresholds, horizon=horizon, keys=keys
        )
    except FileNotFoundError as error:
        print(f"croupier integrity: no such file: {error.filename}", file=sys.stderr)
        return 2
    return publish(
        found, as_lines=as_lines, html=html, window=window, thresholds=thresholds, out=out
    )


def publish(
    found: Sequence[Examined],
    *,
    as_lines: bool,
    html: str | None,
    window: int,
    thresholds: Thresholds,
    out: TextIO,
) -> int:
    """Write the HTML page when asked (`html`: its path), then print the findings."""
    if html is not None:
        from services.statistics.page import page

        try:
            Path(html).write_text(page(found, window=window, thresholds=thresholds), "utf-8")
        except OSError as error:
            print(f"croupier integrity: --html {html}: {error.strerror}", file=sys.stderr)
            return 2
    return show([e.finding for e in found], as_lines=as_lines, out=out)


def show(found: Sequence[Finding], *, as_lines: bool, out: TextIO) -> int:
    """Print the findings: aligned lines, or JSON Lines."""
    try:
        if as_lines:
            out.flush()
            out.buffer.write(as_json(found))
        else:
            out.write(as_text(found))
        out.flush()
    except BrokenPipeError:  # `croupier integrity FILE | head`
        return 0
    return 0
