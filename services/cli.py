"""The `croupier` command: a thin shell over the services."""

from __future__ import annotations

import argparse
import sys


def _replay(args: argparse.Namespace) -> int:
    from services.settlement.fold import Fold
    from services.settlement.replay import lines, replay

    try:
        replay(lines(args.files), sys.stdout.buffer, Fold(horizon=args.horizon), stats=args.stats)
    except FileNotFoundError as error:
        print(f"croupier replay: no such file: {error.filename}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
    return 0


def _par(args: argparse.Namespace) -> int:
    from services.games import par

    argv = [args.game, *(["--stake", str(args.stake)] if args.stake else []), *(["--json"] if args.json else [])]
    return par.main(argv)


def _topics(args: argparse.Namespace) -> int:
    from services.settings import Settings
    from services.topics import ensure

    settings = Settings()
    try:
        problems = ensure(settings)
    except Exception as error:
        print(
            f"croupier topics: cannot reach Kafka at {settings.kafka_bootstrap} ({error}); "
            "start it with `make kafka-up` or set KAFKA_BOOTSTRAP",
            file=sys.stderr,
        )
        return 1
    for problem in problems:
        print(f"problem: {problem}", file=sys.stderr)
    return 1 if problems else 0


def _worker(args: argparse.Namespace) -> int:
    from services.settings import Settings
    from services.settlement import worker

    overrides = {"web_port": args.web_port} if args.web_port is not None else {}
    return worker.main(Settings(**overrides), loglevel=args.loglevel)


def parser() -> argparse.ArgumentParser:
    """The command line, one sub-command per job."""
    from services.settlement.fold import DEFAULT_HORIZON

    top = argparse.ArgumentParser(prog="croupier", description=__doc__)
    commands = top.add_subparsers(dest="command", required=True, metavar="COMMAND")

    replay = commands.add_parser(
        "replay",
        help="replay events (JSON Lines) offline and print the records they produce",
        description="Read rounds and bets events as JSON Lines (- for standard input) and write "
        "the settlements, refunds and rejections they produce as JSON Lines, exactly as the "
        "stream processors do.",
    )
    replay.add_argument("files", nargs="+", metavar="FILE", help="JSON Lines file, or - for stdin")
    replay.add_argument("--stats", action="store_true", help="end with a table_stats per table")
    replay.add_argument(
        "--horizon",
        type=int,
        default=DEFAULT_HORIZON,
        help=f"decided rounds per table kept to recognise redeliveries (default {DEFAULT_HORIZON})",
    )
    replay.set_defaults(run=_replay)

    par = commands.add_parser(
        "par",
        help="PAR sheet of a game: probabilities, RTP and house edge by enumeration",
    )
    par.add_argument("game", metavar="GAME", help="sicbo, thai-hilo or xocdia")
    par.add_argument("--stake", type=int, help="also show the RTP floor rounding pays at this stake")
    par.add_argument("--json", action="store_true", help="JSON instead of plain text")
    par.set_defaults(run=_par)

    topics = commands.add_parser(
        "topics", help="create the topics, or check the existing ones (idempotent)"
    )
    topics.set_defaults(run=_topics)

    worker = commands.add_parser(
        "worker", help="run a stream processor (start several: they share the partitions)"
    )
    worker.add_argument("--web-port", type=int, help="HTTP port for /health (default: a free one)")
    worker.add_argument("--loglevel", default="info", help="faust log level (default info)")
    worker.set_defaults(run=_worker)
    return top


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `croupier` command."""
    args = parser().parse_args(argv)
    code: int = args.run(args)
    return code


if __name__ == "__main__":
    sys.exit(main())
