"""The `croupier` command: a thin shell over the services."""

from __future__ import annotations

import argparse
import contextlib
import faulthandler
import sys
from typing import Any

DEFAULT_KEYS_DIR = ".data/keys"
DEFAULT_KEYS_FILE = ".data/keys/table-keys.json"


def _table_keys(command: str, path: str | None) -> Any:
    """The table keys of --keys, else of CROUPIER_TABLE_KEYS_FILE; None (after saying why) when
    the file cannot be used."""
    from services.settings import Settings
    from services.signing.keys import KeyFileError, load

    try:
        return load(path if path is not None else Settings().table_keys_file)
    except KeyFileError as error:
        print(f"croupier {command}: {error}", file=sys.stderr)
        return None


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


def _topics(args: argparse.Namespace) -> int:
    from services.security.denied import reraise
    from services.settings import Settings
    from services.topics import ensure

    settings = Settings()
    try:
        problems = ensure(settings)
    except Exception as error:
        reraise(
            error,
            settings,
            doing="create or check the topics",
            resource="the topics",
            operation="Describe, DescribeConfigs, Create and AlterConfigs (the admin's)",
        )
        print(
            f"croupier topics: cannot reach Kafka at {settings.kafka_bootstrap} ({error}); "
            "start it with `make kafka-up` or set KAFKA_BOOTSTRAP",
            file=sys.stderr,
        )
        return 1
    for problem in problems:
        print(f"problem: {problem}", file=sys.stderr)
    return 1 if problems else 0


def _acls(args: argparse.Namespace) -> int:
    from services.security.command import acls

    return acls(args)


def _worker(args: argparse.Namespace) -> int:
    import gc

    # Everything the worker loads and builds to start stays for the life of the process: the
    # cyclic collector would only walk it again and again meanwhile (worker.main resumes it).
    gc.disable()
    from services.settings import Settings
    from services.settlement import worker
    from services.signing.keys import KeyFileError

    overrides = {"web_port": args.web_port} if args.web_port is not None else {}
    try:
        return worker.main(Settings(**overrides), loglevel=args.loglevel)
    except KeyFileError as error:
        print(f"croupier worker: {error}", file=sys.stderr)
        return 2


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


def _publish(args: argparse.Namespace) -> int:
    from services.publisher.command import command

    return command(args)


def _simulate(args: argparse.Namespace) -> int:
    from services.simulation.simulate import command

    return command(args)


def _keys_new(args: argparse.Namespace) -> int:
    from pathlib import Path

    from services.settings import Settings
    from services.signing.command import new

    keys_file = args.keys_file or Settings().table_keys_file or DEFAULT_KEYS_FILE
    return new(
        args.table,
        out_dir=Path(args.out_dir),
        keys_file=None if args.print_only else Path(keys_file),
        out=sys.stdout,
    )


def _wallet(args: argparse.Namespace) -> int:
    from services.wallet.command import command

    return command(args)


def _api(args: argparse.Namespace) -> int:
    from services.history import service
    from services.history.settings import ApiSettings, AuthSettings
    from services.history.tokens import JwksError
    from services.settings import Settings

    given = (("host", args.host), ("port", args.port), ("project", args.project))
    overrides = {k: v for k, v in given if v is not None}
    api = ApiSettings(**overrides)
    try:
        return service.main(Settings(), api, AuthSettings(), loglevel=args.loglevel)
    except JwksError as error:
        print(f"croupier api: CROUPIER_API_JWKS_FILE {error}", file=sys.stderr)
        return 2


def _token(args: argparse.Namespace) -> int:
    import time

    from services.history.issuer import IssuerKeyError, claims, local, mint, read_key

    try:
        key = read_key(args.key) if args.key else local().key
    except IssuerKeyError as error:
        print(f"croupier token: {error}", file=sys.stderr)
        return 2
    body = claims(
        scopes=args.scope or ["history:read", "report:read"],
        audience=args.audience,
        subject=args.subject,
        now=int(time.time()),
        lifetime=int(args.days * 86400),
    )
    print(mint(key, body))
    return 0


def _projector(args: argparse.Namespace) -> int:
    from services.history import service
    from services.history.settings import ApiSettings
    from services.settings import Settings

    return service.project(Settings(), ApiSettings(), loglevel=args.loglevel)


def _run(args: argparse.Namespace) -> int:
    from services.run import command

    return command(args)


def _keys_option(command: argparse.ArgumentParser) -> None:
    """--keys of the commands that run the fold on files, as the workers would."""
    command.add_argument(
        "--keys",
        metavar="FILE",
        help="table keys file: check the signatures of these tables' round events "
        "(default: CROUPIER_TABLE_KEYS_FILE; unset: no table signs)",
    )


def parser() -> argparse.ArgumentParser:
    """The command line, one sub-command per job."""
    from services.archive.command import range_options, register
    from services.reports.command import options
    from services.settlement.fold import DEFAULT_HORIZON
    from services.statistics.command import arguments as integrity_arguments

    top = argparse.ArgumentParser(prog="croupier", description=__doc__)
    commands = top.add_subparsers(dest="command", required=True, metavar="COMMAND")

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

    topics = commands.add_parser(
        "topics", help="create the topics, or check the existing ones (idempotent)"
    )
    topics.set_defaults(run=_topics)

    acls = commands.add_parser(
        "acls",
        help="the roles' ACLs (and SCRAM users) on a secured cluster, from services/roles.py",
        description="As the cluster's admin principal: allow each role (game, croupier, wallet, "
        "readside, auditor) exactly its grants, remove the role principals' ACLs no grant names, "
        "and with --passwords create each role's missing SCRAM-SHA-512 user from "
        "DIR/<role>.password. Idempotent. Exit 2 when the cluster refuses (not the admin).",
    )
    acls.add_argument("--passwords", metavar="DIR", help="directory of <role>.password files")
    acls.add_argument(
        "--rotate",
        action="store_true",
        help="with --passwords: set every role's password again from its file (rotation)",
    )
    acls.add_argument("--list", action="store_true", help="print the planned ACLs, change nothing")
    acls.set_defaults(run=_acls)

    worker = commands.add_parser(
        "worker", help="run a stream processor (start several: they share the partitions)"
    )
    worker.add_argument(
        "--web-port",
        type=int,
        help="HTTP port of /health and /metrics (default CROUPIER_WEB_PORT; 0: a free one)",
    )
    worker.add_argument("--loglevel", default="info", help="faust log level (default info)")
    worker.set_defaults(run=_worker)

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

    publish = commands.add_parser(
        "publish",
        help="publish round and bet events (JSON Lines) to Kafka, validated, keyed by table",
        description="Validate every event with the schemas, then send round events to the rounds "
        "topic and bets to the bets topic, keyed by table_id (idempotent producer, acks=all). "
        "Stops at the first invalid line (exit 1) unless --skip-invalid.",
    )
    publish.add_argument("files", nargs="+", metavar="FILE", help="JSON Lines file, or - for stdin")
    publish.add_argument(
        "--skip-invalid", action="store_true", help="report invalid lines and go on"
    )
    publish.add_argument(
        "--key",
        action="append",
        default=[],
        metavar="FILE",
        help="a table's private key file (`croupier keys new`): sign that table's "
        "round.result, .corrected, .voided and .cancelled events that carry no sig (repeatable)",
    )
    publish.set_defaults(run=_publish)

    simulate = commands.add_parser(
        "simulate",
        help="simulate tables of every game and their players, to Kafka or to a file",
        description="Tables of Sic Bo, Thai HiLo and Xoc Dia with players betting in the betting "
        "window, disconnects, suspensions, reshakes, cancelled rounds, late bets and producer "
        "retries. The same seed and start give the same events.",
    )
    simulate.add_argument("--tables", type=int, default=6, help="tables, games in turn (default 6)")
    simulate.add_argument("--players", type=int, default=60, help="players (default 60)")
    simulate.add_argument("--rounds", type=int, default=0, help="rounds per table, 0 = forever")
    simulate.add_argument(
        "--speed",
        type=float,
        default=6.0,
        help="rounds per minute per table in wall time (default 6; 0 = as fast as possible)",
    )
    simulate.add_argument("--seed", type=int, help="random seed (default: a new one, printed)")
    simulate.add_argument(
        "--start", help="simulated time of the start, RFC 3339 (default 2026-01-01T12:00:00Z)"
    )
    simulate.add_argument("--out", metavar="FILE", help="write JSON Lines to FILE, not Kafka")
    simulate.add_argument(
        "--dry-run", action="store_true", help="write JSON Lines to standard output, not Kafka"
    )
    simulate.add_argument(
        "--sign",
        metavar="KEYS_FILE",
        help="every table signs its money-moving round events with a test key derived from the "
        "seed and the table (reproducible, not secret); their public keys go to KEYS_FILE",
    )
    simulate.add_argument(
        "--loaded",
        action="append",
        default=[],
        metavar="SCOPE:ID",
        help="a table, dealer or shaker whose rounds fall unfairly (dice biased toward 6, discs "
        "toward red), to show `croupier integrity`'s alarm: table:SB-01, dealer:D03, "
        "shaker:XD-01-S2 (repeatable)",
    )
    simulate.set_defaults(run=_simulate)

    keys = commands.add_parser(
        "keys",
        help="signing keys of tables (docs/CONTRACT.md, Signed round events)",
        description="Ed25519 key pairs with which a table's game service signs its money-moving "
        "round events, and the table keys file croupier checks them with.",
    )
    keys_commands = keys.add_subparsers(dest="keys_command", required=True, metavar="ACTION")
    keys_new = keys_commands.add_parser(
        "new",
        help="a new key pair for a table: private key file (0600), public key into the keys file",
        description="Write a new Ed25519 private key of TABLE to OUT_DIR/<table>.<key>.key.json "
        "(mode 0600, never overwritten) and add its public key to the table keys file (several "
        "keys per table while one is rotated). Workers read the keys file when they start.",
    )
    keys_new.add_argument("table", metavar="TABLE", help="the table_id that signs with the key")
    keys_new.add_argument(
        "--out-dir",
        default=DEFAULT_KEYS_DIR,
        help=f"where the private key file goes (default {DEFAULT_KEYS_DIR})",
    )
    keys_new.add_argument(
        "--keys-file",
        help="table keys file to add the public key to (default CROUPIER_TABLE_KEYS_FILE, "
        f"else {DEFAULT_KEYS_FILE})",
    )
    keys_new.add_argument(
        "--print-only", action="store_true", help="print the public key entry, change no file"
    )
    keys_new.set_defaults(run=_keys_new)

    wallet = commands.add_parser(
        "wallet",
        help="credit settlements, refunds and adjustments to player balances in SQLite, "
        "idempotently",
        description="Read settlements, refunds and adjustments (read_committed) and apply them to "
        "balances in "
        "a SQLite file, one transaction per batch, each record id once: running it again over "
        "the same records changes no balance.",
    )
    wallet.add_argument("--db", default=".data/wallet.sqlite", help="SQLite file")
    wallet.add_argument(
        "--follow", action="store_true", help="keep consuming (until Ctrl-C) instead of stopping"
    )
    wallet.add_argument(
        "--from-beginning",
        action="store_true",
        help="re-read the topics from the start (records already applied are skipped by id)",
    )
    wallet.add_argument(
        "--group",
        metavar="NAME",
        help="share the partitions with the other processes of this consumer group (on a "
        "secured cluster the wallet role may use groups named wallet-*); positions stay in the "
        "ledger, and are committed to the group too, for its lag",
    )
    wallet.add_argument("--report", action="store_true", help="print the balances per player")
    wallet.add_argument(
        "--no-consume", action="store_true", help="do not read Kafka (with --report: just report)"
    )
    wallet.set_defaults(run=_wallet)

    run = commands.add_parser(
        "run",
        help="the whole system with a live view: broker, topics, workers, read side, simulator",
        description="Start the local broker (unless KAFKA_BOOTSTRAP is set), create the topics, "
        "start the settlement workers, the read side (its API and projector) and the simulator, "
        "and show a live view until Ctrl-C or --duration; everything it started is stopped at "
        "the end. What it reset of its own local state (a broker formatted in the other "
        "security mode, a read side ahead of recreated topics) it says in one line.",
    )
    run.add_argument("--duration", type=float, help="stop by itself after SECONDS")
    run.add_argument("--workers", type=int, default=2, help="settlement workers, 1..3 (default 2)")
    run.add_argument("--tables", type=int, default=6, help="simulated tables (default 6)")
    run.add_argument("--players", type=int, default=60, help="simulated players (default 60)")
    run.add_argument(
        "--speed", type=float, default=12.0, help="rounds per minute per table (default 12)"
    )
    run.add_argument("--seed", type=int, help="simulator seed (default: a new one)")
    run.add_argument("--plain", action="store_true", help="periodic plain lines even on a terminal")
    run.set_defaults(run=_run)

    api = commands.add_parser(
        "api",
        help="the read side: bet history, round recall, table statistics board (HTTP API)",
        description="Serve bet histories, round recalls and statistics boards from the read "
        "side's database (DATABASE_URL, else .data/readside.sqlite) over HTTP (OpenAPI at "
        "/openapi.json, the tables at /), projecting croupier's committed topics into it too "
        "unless --serve-only.",
    )
    api.add_argument("--host", help="address to bind (default CROUPIER_API_HOST or 127.0.0.1)")
    api.add_argument("--port", type=int, help="port (default CROUPIER_API_PORT or 8080)")
    api.add_argument(
        "--serve-only",
        dest="project",
        action="store_const",
        const=False,
        help="do not project (another process does: `croupier projector`)",
    )
    api.add_argument("--loglevel", default="info", help="faust log level (default info)")
    api.set_defaults(run=_api)

    token = commands.add_parser(
        "token",
        help="a bearer token for the read side's API, signed by a local key (for tests)",
        description="Print an access token (JWT) for `croupier api`, signed with --key (a PEM "
        "Ed25519 or RSA private key: EdDSA or RS256), by default the local key of `make run` "
        "in .data/auth (made if missing; its JWKS, .data/auth/jwks.json, is what the API needs "
        "in CROUPIER_API_JWKS_FILE). Production tokens come from your identity provider.",
    )
    token.add_argument(
        "--scope",
        action="append",
        choices=("history:read", "report:read"),
        help="a scope to grant (repeatable; default both)",
    )
    token.add_argument("--key", metavar="FILE", help="PEM private key (default .data/auth's)")
    token.add_argument("--days", type=float, default=30.0, help="lifetime (default 30 days)")
    token.add_argument("--audience", default="croupier", help="aud (default croupier)")
    token.add_argument("--subject", default="operator", help="sub (default operator)")
    token.set_defaults(run=_token)

    projector = commands.add_parser(
        "projector",
        help="project croupier's committed topics into the read side's database, exactly once",
        description="Read the accepted (the workers' journals), table-stats and rejected topics "
        "(read_committed) into the database (DATABASE_URL, else .data/readside.sqlite), each "
        "batch in one transaction with the positions it consumed.",
    )
    projector.add_argument("--loglevel", default="info", help="log level (default info)")
    projector.set_defaults(run=_projector)
    return top


def _fault_stacks() -> None:
    """A crash in a C extension (librdkafka's clients) logs every thread's Python stack to
    stderr; not when stderr is no file (the command called in-process, its output captured)."""
    with contextlib.suppress(AttributeError, OSError, ValueError):
        if not faulthandler.is_enabled():
            faulthandler.enable()


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `croupier` command; a refusal of the brokers, security settings that
    cannot work, or a setting that is not valid end it with code 2 and one line of what to do."""
    from pydantic import ValidationError

    from services.ports import PortTaken
    from services.security.clients import SecurityConfigError
    from services.security.denied import AccessDenied

    args = parser().parse_args(argv)
    _fault_stacks()
    try:
        code: int = args.run(args)
    except (AccessDenied, SecurityConfigError) as error:
        print(f"croupier {args.command}: {error}", file=sys.stderr)
        return 2
    except ValidationError as error:
        print(f"croupier {args.command}: {invalid_settings(error)}", file=sys.stderr)
        return 2
    except PortTaken as error:
        print(f"croupier {args.command}: {error}", file=sys.stderr)
        return 1
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError) as error:
        what = f"cannot open {error.filename}: {error.strerror}"
        print(f"croupier {args.command}: {what}", file=sys.stderr)
        return 1
    return code


def invalid_settings(error: Any) -> str:
    """One line naming each environment variable whose value a settings class refused, and why."""
    from services.history.settings import ApiSettings, AuthSettings
    from services.settings import Settings

    kinds = (Settings, ApiSettings, AuthSettings)
    kind = {kind.__name__: kind for kind in kinds}.get(error.title)

    def variable(loc: tuple[Any, ...]) -> str:
        """A field's environment variable: the class's prefix and its name, or the alias that
        was set (pydantic reports a field read through an alias by that alias)."""
        name = "_".join(str(part) for part in loc)
        if kind is None or name not in kind.model_fields:
            return name
        return f"{kind.model_config.get('env_prefix', '')}{name.upper()}"

    found = [
        f"{variable(problem['loc'])}={problem.get('input')!r}: {problem['msg']}"
        if problem["loc"]
        else str(problem["msg"]).removeprefix("Value error, ")  # of the settings as a whole
        for problem in error.errors()
    ]
    return (
        f"invalid settings: {'; '.join(found)}. Correct or unset them "
        "(docs/reference/settings.md lists every setting)"
    )


if __name__ == "__main__":
    sys.exit(main())
