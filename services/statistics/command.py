"""`croupier integrity FILE...`: the outcome integrity tests of a replay's input files, through
the very same fold as `croupier replay` (docs/CONTRACT.md, "Outcome integrity")."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence
from typing import TextIO

import msgspec

from services.settlement.fold import Fold
from services.settlement.replay import journaled, lines
from services.signing.signature import NO_KEYS, TableKeys
from services.statistics.counted import Counted
from services.statistics.integrity import DEFAULT, WINDOW, Finding, Thresholds, evaluate


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
    rounds = counted(source, horizon=horizon, keys=keys).rounds()
    return evaluate(rounds, window, thresholds)


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
    out: TextIO | None = None,
) -> int:
    """Print the findings (standard output by default): aligned lines, or JSON Lines."""
    out = sys.stdout if out is None else out
    try:
        found = findings(
            lines(paths), window=window, thresholds=thresholds, horizon=horizon, keys=keys
        )
    except FileNotFoundError as error:
        print(f"croupier integrity: no such file: {error.filename}", file=sys.stderr)
        return 2
    return show(found, as_lines=as_lines, out=out)


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
