"""The operator's commands: topics, acls, worker, run, api, token and projector."""

from __future__ import annotations

import argparse
import sys
from typing import Any


def add(commands: Any) -> None:
    """Register the operator's commands."""
    topics = commands.add_parser(
        "topics",
        help="create the missing topics and bring the existing ones' settings to plan (idempotent)",
        description="Create every topic of the plan (services/topics.py) that is missing, with its "
        "partitions and settings; on the topics that exist, set every planned setting that "
        "differs (settings outside the plan stay as they are) and print each change, when the "
        "client may alter topic configs (the admin may; otherwise it says what it could not set). "
        "Partitions and replicas are never changed: too few is printed with the command that adds "
        "them. A second run changes nothing. Exit 1 when running would be unsafe (rounds and bets "
        "not co-partitioned, accepted or settlement-state with fewer partitions than the inputs) "
        "or Kafka cannot be reached, 2 when the brokers refuse to describe the topics or to "
        "create a missing one.",
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
