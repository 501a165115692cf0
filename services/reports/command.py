"""`croupier report FILE...`: the regulator's report from a replay file (the very same fold), over
a period of gaming days."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar

from services.reports.days import (
    DEFAULT_STARTS,
    DEFAULT_ZONE,
    Period,
    PeriodError,
    parse_day,
    parse_starts,
    parse_zone,
)
from services.reports.figures import Report
from services.reports.render import as_csv, as_json, as_text
from services.settlement.fold import Fold
from services.settlement.replay import journaled, lines
from services.signing.signature import NO_KEYS, TableKeys

if TYPE_CHECKING:
    from rich.progress import Progress

FORMATS = {"text": as_text, "csv": as_csv, "json": as_json}


def build(
    source: Iterable[bytes],
    horizon: int,
    keys: TableKeys = NO_KEYS,
    *,
    fold: Fold | None = None,
    report: Report | None = None,
) -> Report:
    """Fold every line and report on what the fold decided and the round events it accepted;
    given a fold (keeping its journal) and a report that have read what came before, go on from
    them."""
    fold = Fold(horizon=horizon, journal=True, keys=keys) if fold is None else fold
    report = Report() if report is None else report
    for inputs, records in journaled(source, fold):
        for event, _ in inputs:
            report.accepted(event)
        for record in records:
            report.record(record)
    return report


def _with_progress(paths: list[str], progress: Progress) -> Iterator[bytes]:
    sizes = [os.path.getsize(p) for p in paths if p != "-"]
    task = progress.add_task("reading", total=sum(sizes) or None)
    done = 0
    for n, line in enumerate(lines(paths)):
        done += len(line) + 1
        if n % 20000 == 0:
            progress.update(task, completed=done)
        yield line
    progress.update(task, completed=done)


def main(
    paths: list[str],
    output: str,
    horizon: int,
    keys: TableKeys = NO_KEYS,
    period: Period | None = None,
) -> int:
    """Print the report; a progress bar on standard error while a terminal watches (rich is
    loaded only here: the other commands that share this module's options start sooner)."""
    from rich.progress import BarColumn, DownloadColumn, Progress, TimeRemainingColumn

    progress = Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        DownloadColumn(),
        TimeRemainingColumn(),
        transient=True,
        disable=not sys.stderr.isatty(),
    )
    try:
        with progress:
            report = build(_with_progress(paths, progress), horizon, keys)
    except FileNotFoundError as error:
        print(f"croupier report: no such file: {error.filename}", file=sys.stderr)
        return 2
    return written(output, report, period or Period())


def written(output: str, report: Report, period: Period) -> int:
    """Write the report over the period in the format; 2 after saying why it cannot be (a
    gaming day that does not start on a quarter hour)."""
    try:
        text = FORMATS[output](report, period)
    except PeriodError as error:
        print(f"croupier report: {error}", file=sys.stderr)
        return 2
    sys.stdout.write(text)
    return 0


T = TypeVar("T")


def _argument(parse: Callable[[str], T]) -> Callable[[str], T]:
    """A parser of `days` as argparse's type: its refusal argparse's message (exit code 2)."""

    def read(text: str) -> T:
        try:
            return parse(text)
        except PeriodError as error:
            raise argparse.ArgumentTypeError(str(error)) from error

    return read


def options(command: argparse.ArgumentParser, horizon: int) -> None:
    """The report's arguments: its inputs, its period and gaming day, its format."""
    command.add_argument("files", nargs="*", metavar="FILE", help="JSON Lines file, or - for stdin")
    command.add_argument("--format", choices=tuple(FORMATS), default="text", help="output format")
    command.add_argument("--horizon", type=int, default=horizon, help=argparse.SUPPRESS)
    command.add_argument(
        "--archive",
        metavar="DIR",
        help="read the archive `croupier archive` wrote, checked first, instead of FILE...: the "
        "UTC days the period touches and one either side (the days before folded for context)",
    )
    command.add_argument(
        "--from",
        dest="start",
        type=_argument(parse_day),
        metavar="DAY",
        help="the period's first gaming day, YYYY-MM-DD (default: the first with figures); of "
        "FILE... or of --archive alike",
    )
    command.add_argument(
        "--to",
        type=_argument(parse_day),
        metavar="DAY",
        help="the period's last gaming day, inclusive (default: the last with figures)",
    )
    command.add_argument(
        "--day-starts",
        type=_argument(parse_starts),
        default=DEFAULT_STARTS,
        metavar="HH:MM",
        help="when a gaming day starts, local time on a quarter hour; a day is named by the "
        f"date it starts on (default {DEFAULT_STARTS})",
    )
    command.add_argument(
        "--tz",
        type=_argument(parse_zone),
        default=DEFAULT_ZONE,
        metavar="AREA/CITY",
        help=f"the gaming day's time zone, an IANA name (default {DEFAULT_ZONE})",
    )


def run(args: argparse.Namespace, keys: Any) -> int:
    """The report the parsed arguments ask for (`options`); 2 after saying why it cannot be."""
    from services.archive import command as archived

    try:
        period = Period(args.start, args.to, args.day_starts, args.tz)
    except PeriodError as error:
        print(f"croupier report: {error}", file=sys.stderr)
        return 2
    if not archived.sources_given("report", args, period=True):
        return 2
    if args.archive is not None:
        return archived.report(args, keys, period)
    return main(args.files, args.format, args.horizon, keys, period)
