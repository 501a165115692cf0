"""The auditor's commands: replay, report, integrity, par, verify and archive, each folding
inputs exactly as the workers do."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any


def add(commands: Any) -> None:
    """Register the auditor's commands."""
    from services.archive.command import range_options, register
    from services.reports.command import options
    from services.settlement.fold import DEFAULT_HORIZON
    from services.statistics.command import arguments as integrity_arguments

    replay = commands.add_parser(
        "replay",
        help="replay events (JSON Lines) offline and print the records they produce",
        description="Read rounds and bets events as JSON Lines (- for standard input) and write "
        "the settlements, refunds, adjustments and rejections they produce as JSON Lines, "
        "exactly as the stream processors do.",
    )
    replay.add_argument("files", nargs="*", metavar="FILE", help="JSON Lines file, or - for stdin")
    replay.add_argument("--stats", action="store_true", help="end with a table_stats per table")
    replay.add_argument(
        "--horizon",
        type=int,
        default=DEFAULT_HORIZON,
        help=f"decided rounds per table kept to recognise redeliveries (default {DEFAULT_HORIZON})",
    )
    _keys_option(replay)
    range_options(replay)
    replay.set_defaults(run=_replay)

    report = commands.add_parser(
        "report",
        help="the regulator's report of a replay file: rounds, money, GGR, RTP, corrections",
        description="Per table, game, gaming day (--day-starts, --tz: the UTC day unless told) "
        "and currency over the period --from to --to: rounds with a result, cancelled, corrected "
        "and voided; bets, stakes, payouts (adjustments included), refunds, GGR, the actual RTP "
        "next to the PAR sheet's RTP of the same bets; the period's totals; every correction and "
        "void with who authorised it. The very same fold as `croupier replay`.",
    )
    options(report, DEFAULT_HORIZON)
    _keys_option(report)
    report.set_defaults(run=_report)

    integrity = commands.add_parser(
        "integrity",
        help="outcome integrity: each table's, dealer's and shaker's outcomes against the fair "
        "distribution (chi-square)",
        description="Fold the replay's input files as `croupier replay` does and test each "
        "table's, dealer's and shaker's last counted rounds of each game against the fair "
        "distribution: faces and totals of the dice (sicbo, thai-hilo), the number of red discs "
        "(xocdia), Pearson's chi-square. One line per scope and test, verdict too_few (under 100 "
        "rounds), alarm, watch or ok.",
    )
    integrity_arguments(integrity)
    integrity.add_argument("--horizon", type=int, default=DEFAULT_HORIZON, help=argparse.SUPPRESS)
    _keys_option(integrity)
    range_options(integrity)
    integrity.set_defaults(run=_integrity)

    par = commands.add_parser(
        "par",
        help="PAR sheet of a game: probabilities, RTP and house edge by enumeration",
    )
    par.add_argument("game", metavar="GAME", help="sicbo, thai-hilo or xocdia")
    par.add_argument(
        "--stake", type=int, help="also show the RTP floor rounding pays at this stake"
    )
    par.add_argument("--json", action="store_true", help="JSON instead of plain text")
    par.set_defaults(run=_par)

    verify = commands.add_parser(
        "verify",
        help="audit a cluster: committed output against an offline fold of the input topics",
        description="Read rounds and bets from the beginning, fold them offline, and compare with "
        "the committed settlements, refunds, adjustments, rejected and table-stats: report every "
        "missing, "
        "duplicated, unexpected or differing record, and the bets still pending. When retention "
        "removed the head of a partition, it says which window it verified and counts what it "
        "could not check, never as findings. Exit 0 when all checkable records agree, 1 when "
        "not, 2 when the topics cannot be read.",
    )
    verify.add_argument("--bootstrap", help="Kafka bootstrap servers (default: KAFKA_BOOTSTRAP)")
    verify.add_argument("--json", action="store_true", help="print a JSON summary")
    verify.add_argument("--limit", type=int, default=20, help="findings and pending bets listed")
    verify.add_argument("--timeout", type=float, default=900.0, help="seconds to read a topic")
    verify.add_argument("--quiet", action="store_true", help="no progress on standard error")
    range_options(verify, instead="the topics (no broker: its inputs folded against its decisions)")
    verify.set_defaults(run=_verify)
    register(commands)


def _table_keys(command: str, path: str | None) -> Any:
    """The table keys of --keys, else of CROUPIER_TABLE_KEYS_FILE; None (after saying why) when
    the file cannot be used."""
    if path is None:
        path = _keys_file()
        if path is None:
            from services.signing.signature import NO_KEYS

            return NO_KEYS
    from services.signing.keys import KeyFileError, load

    try:
        return load(path)
    except KeyFileError as error:
        print(f"croupier {command}: {error}", file=sys.stderr)
        return None


def _keys_file() -> str | None:
    """CROUPIER_TABLE_KEYS_FILE, as the settings read it. They are loaded only when the
    environment names it (in any case, as they read names), since loading them takes a tenth of
    a second, more than a short replay."""
    if not any(name.upper() == "CROUPIER_TABLE_KEYS_FILE" for name in os.environ):
        return None
    from services.settings import Settings

    return Settings().table_keys_file


def _keys_option(command: argparse.ArgumentParser) -> None:
    """--keys of the commands that run the fold on files, as the workers would."""
    command.add_argument(
        "--keys",
        metavar="FILE",
        help="table keys file: check the signatures of these tables' round events "
        "(default: CROUPIER_TABLE_KEYS_FILE; unset: no table signs)",
    )


def _replay(args: argparse.Namespace) -> int:
    from services.archive import command as archived
    from services.settlement.fold import Fold
    from services.settlement.replay import lines, replay

    if not archived.sources_given("replay", args):
        return 2
    keys = _table_keys("replay", args.keys)
    if keys is None:
        return 2
    if args.archive is not None:
        return archived.replay(args, keys)
    fold = Fold(horizon=args.horizon, keys=keys)
    try:
        replay(lines(args.files), sys.stdout.buffer, fold, stats=args.stats)
    except FileNotFoundError as error:
        print(f"croupier replay: no such file: {error.filename}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
    return 0


def _report(args: argparse.Namespace) -> int:
    from services.reports.command import run

    keys = _table_keys("report", args.keys)
    return 2 if keys is None else run(args, keys)


def _integrity(args: argparse.Namespace) -> int:
    from services.archive import command as archived
    from services.statistics.command import main
    from services.statistics.integrity import MIN_ROUNDS, Thresholds

    if not archived.sources_given("integrity", args):
        return 2
    if args.window < MIN_ROUNDS:
        print(
            f"croupier integrity: --window {args.window}: at least {MIN_ROUNDS}, the fewest "
            "rounds a test runs on",
            file=sys.stderr,
        )
        return 2
    try:
        thresholds = Thresholds(alarm=args.alarm, watch=args.watch)
    except ValueError as error:
        print(f"croupier integrity: {error}", file=sys.stderr)
        return 2
    keys = _table_keys("integrity", args.keys)
    if keys is None:
        return 2
    if args.archive is not None:
        return archived.integrity(args, keys, thresholds)
    return main(
        args.files,
        window=args.window,
        thresholds=thresholds,
        as_lines=args.json,
        horizon=args.horizon,
        keys=keys,
        html=args.html,
    )


def _par(args: argparse.Namespace) -> int:
    from services.games import par

    argv = [
        args.game,
        *(["--stake", str(args.stake)] if args.stake else []),
        *(["--json"] if args.json else []),
    ]
    return par.main(argv)


def _verify(args: argparse.Namespace) -> int:
    from services.archive import command as archived
    from services.audit.console import run
    from services.settings import Settings

    if not archived.sources_given("verify", args):
        return 2
    if args.archive is not None:
        keys = _table_keys("verify", None)
        return 2 if keys is None else archived.verify(args, keys)
    overrides = {"kafka_bootstrap": args.bootstrap} if args.bootstrap else {}
    settings = Settings(**overrides)
    return run(
        settings, as_json=args.json, limit=args.limit, timeout=args.timeout, quiet=args.quiet
    )
