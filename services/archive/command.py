"""The archive's command line: `croupier archive DIR`, and `--archive DIR --from --to` of the
auditor's commands (replay, report, integrity, verify), which check the archive before reading
it."""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Callable
from datetime import date, timedelta
from typing import TYPE_CHECKING, Any

import msgspec

from services.archive.manifest import Tampered

if TYPE_CHECKING:
    from services.archive.source import Archive

REFUSED = 2
"""Exit status of a command that refuses the archive (or its arguments)."""


def register(commands: Any) -> None:
    """The `archive` sub-command."""
    archive = commands.add_parser(
        "archive",
        help="copy accepted and rejected into day files under DIR, exactly once, with a "
        "tamper-evident manifest chain",
        description="Read the committed `accepted` (every accepted input verbatim, and the "
        "decisions) and `rejected` topics from the archive's own positions and write them to "
        "gzip JSON Lines day files under DIR, each day's manifest holding its files' SHA-256 and "
        "the day before's manifest's. Restarts and kills never archive a record twice or lose one.",
    )
    archive.add_argument(
        "dir",
        metavar="DIR",
        help="the archive's directory, or an object store's URL (s3://bucket/prefix)",
    )
    archive.add_argument(
        "--once", action="store_true", help="stop when caught up with the topics' ends at start"
    )
    archive.add_argument(
        "--interval",
        type=float,
        default=10.0,
        help="seconds between commits of what was read (default 10)",
    )
    archive.add_argument("--bootstrap", help="Kafka bootstrap servers (default: KAFKA_BOOTSTRAP)")
    archive.set_defaults(run=_archive)


def _archive(args: argparse.Namespace) -> int:
    from services.archive.service import main

    return main(args.dir, once=args.once, interval=args.interval, bootstrap=args.bootstrap)


def _day(text: str) -> str:
    try:
        return date.fromisoformat(text).isoformat()
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"{text!r} is no date (YYYY-MM-DD)") from error


def range_options(command: argparse.ArgumentParser, instead: str = "FILE...") -> None:
    """--archive, --from and --to of a command that reads the inputs (from `instead`)."""
    command.add_argument(
        "--archive",
        metavar="DIR",
        help=f"read the archive `croupier archive` wrote, checked first, instead of {instead}",
    )
    command.add_argument(
        "--from", dest="start", type=_day, metavar="DAY", help="first UTC day read of the archive"
    )
    command.add_argument("--to", type=_day, metavar="DAY", help="last UTC day read of the archive")


Days = tuple[str | None, str | None]
"""The first and last UTC day read of an archive (None: its first, its last)."""


def opened(command: str, args: argparse.Namespace, days: Days | None = None) -> Archive | None:
    """The archive of --archive, checked for --from and --to (or for the `days` the command reads,
    cut to the archive's); None after saying why it is refused. The archive's reader (and its
    Kafka client) is loaded only then, so that a command reading files starts sooner."""
    from services.archive.source import open_archive

    try:
        if days is not None:
            return open_archive(args.archive, *days, within=True)
        return open_archive(args.archive, args.start, args.to)
    except Tampered as error:
        print(f"croupier {command}: archive refused: {error}", file=sys.stderr)
    except (OSError, ValueError) as error:
        print(
            f"croupier {command}: cannot read the archive {args.archive}: {error}", file=sys.stderr
        )
    return None


def sources_given(command: str, args: argparse.Namespace, *, period: bool = False) -> bool:
    """Whether exactly one of FILE... and --archive was given (else says so); --from and --to
    only with --archive, but where they are a `period` of any input."""
    files = getattr(args, "files", [])
    if args.archive is None and (args.start or args.to) and not period:
        print(f"croupier {command}: --from and --to need --archive", file=sys.stderr)
        return False
    if files and args.archive is not None:
        print(f"croupier {command}: give FILE... or --archive, not both", file=sys.stderr)
        return False
    if not files and args.archive is None and hasattr(args, "files"):
        print(f"croupier {command}: give FILE... or --archive DIR", file=sys.stderr)
        return False
    return True


def _on_archive(
    command: str, args: argparse.Namespace, work: Callable[[Archive], int], days: Days | None = None
) -> int:
    """Check the archive of --archive, then do the work on it; exit 2 (saying why) when the
    archive is refused, before the work or during it (a file changed after the check)."""
    archive = opened(command, args, days)
    if archive is None:
        return REFUSED
    try:
        return work(archive)
    except Tampered as error:
        print(f"croupier {command}: archive refused: {error}", file=sys.stderr)
        return REFUSED


def replay(args: argparse.Namespace, keys: Any) -> int:
    from services.settlement.fold import Fold
    from services.settlement.replay import replay as run

    def work(archive: Archive) -> int:
        fold = archive.warm(Fold(horizon=args.horizon, keys=keys))
        with contextlib.suppress(BrokenPipeError):  # `croupier replay --archive DIR | head`
            run(archive.inputs(), sys.stdout.buffer, fold, stats=args.stats)
        return 0

    return _on_archive("replay", args, work)


def report(args: argparse.Namespace, keys: Any, period: Any) -> int:
    """The report over the period's gaming days, of the archive's UTC days they touch and one
    day either side (an input is archived on the day it arrived, which its `at` may precede or
    follow by up to a day), the days before folded for context."""
    from services.reports.command import written
    from services.settlement.fold import Fold

    def work(archive: Archive) -> int:
        found = archive.report(Fold(horizon=args.horizon, journal=True, keys=keys))
        return written(args.format, found, period)

    first, after = period.quarters()
    return _on_archive("report", args, work, (_beside(first, -1), _beside(after, 1)))


def _beside(quarter: str | None, days: int) -> str | None:
    """The UTC day `days` from a quarter hour's (None: unbounded, as is a day past the years)."""
    if quarter is None:
        return None
    try:
        return (date.fromisoformat(quarter[:10]) + timedelta(days=days)).isoformat()
    except (ValueError, OverflowError):
        return None


def verify(args: argparse.Namespace, keys: Any) -> int:
    from services.archive.audit import verify as check
    from services.settlement.fold import DEFAULT_HORIZON, Fold

    def work(archive: Archive) -> int:
        verdict = check(archive, Fold(horizon=DEFAULT_HORIZON, keys=keys), args.limit)
        if args.json:
            summary = {"ok": verdict.ok, **msgspec.structs.asdict(verdict)}
            sys.stdout.buffer.write(msgspec.json.encode(summary) + b"\n")
        else:
            sys.stdout.write(_text(verdict))
        return 0 if verdict.ok else 1

    return _on_archive("verify", args, work)


def integrity(args: argparse.Namespace, keys: Any, thresholds: Any) -> int:
    """The outcome integrity tests of the rounds whose result the range's journals hold (the
    days before it folded for context: a round opened the day before counts with its dealer)."""
    from services.settlement.fold import Fold
    from services.settlement.replay import journaled
    from services.statistics.command import publish
    from services.statistics.counted import Counted
    from services.statistics.integrity import examine

    def work(archive: Archive) -> int:
        found = Counted()
        fold = Fold(horizon=args.horizon, journal=True, keys=keys)
        for inputs, _ in journaled(archive.inputs(context=True), fold):
            for event, _ in inputs:
                found.accept(event)
        before = {(r.table_id, r.round_id): r.at for r in found.rounds()}
        for inputs, _ in journaled(archive.inputs(), fold):
            for event, _ in inputs:
                found.accept(event)
        rounds = [r for r in found.rounds() if before.get((r.table_id, r.round_id)) != r.at]
        return publish(
            examine(rounds, args.window, thresholds),
            as_lines=args.json,
            html=args.html,
            window=args.window,
            thresholds=thresholds,
            out=sys.stdout,
        )

    return _on_archive("integrity", args, work)


def _text(verdict: Any) -> str:
    head = "OK" if verdict.ok else "DIFFERENT"
    out = [
        f"{head}: the archive from {verdict.start} to {verdict.to}: {verdict.journals} journals, "
        f"{verdict.inputs} accepted inputs folded again, {verdict.agreed} of {verdict.decisions} "
        f"decisions as the journals hold them, {verdict.rejected_by_fold} journaled inputs "
        "rejected by the fold",
        "rejected (archived, by reason): "
        + (", ".join(f"{r} {n}" for r, n in verdict.rejected.items()) or "none"),
    ]
    for d in verdict.differences:
        out.append(f"  {d.day} partition {d.partition}: fold {d.expected} journal {d.found}")
    return "\n".join(out) + "\n"
