"""`croupier par GAME [--stake N] [--json]`: print a PAR sheet (the package's only I/O)."""

import argparse
import sys

from .outcomes import GAMES
from .sheet import ParSheet, par_sheet
from .sheet_render import render_json, render_text

__all__ = ["ParSheet", "main", "par_sheet", "render_json", "render_text"]

MAX_STAKE = 2**53 - 1


def stake(text: str) -> int:
    """A stake in minor units, 1..2**53-1 as in the contract."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if not 1 <= value <= MAX_STAKE:
        raise argparse.ArgumentTypeError(f"must be 1..{MAX_STAKE} minor units, got {value}")
    return value


def parser() -> argparse.ArgumentParser:
    """The command line of `croupier par`."""
    p = argparse.ArgumentParser(
        prog="croupier par",
        description="Print the PAR sheet (probability accounting report) of a game: exact "
        "probabilities, RTP and house edge of every wager, by enumeration of its outcomes.",
    )
    p.add_argument("game", metavar="GAME", choices=GAMES, help=f"one of: {', '.join(GAMES)}")
    p.add_argument(
        "--stake",
        type=stake,
        metavar="N",
        help="also show the RTP that floor rounding really pays at stake N (minor units)",
    )
    p.add_argument("--json", action="store_true", help="print JSON instead of a text table")
    return p


def main(argv: list[str] | None = None) -> int:
    """Print the sheet to standard output; argparse exits with status 2 on a bad command line."""
    args = parser().parse_args(argv)
    sheet = par_sheet(args.game, args.stake)
    sys.stdout.write(render_json(sheet) if args.json else render_text(sheet))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
