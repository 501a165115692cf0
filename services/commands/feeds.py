"""The commands that feed croupier or take its records: publish, simulate, keys and wallet."""

from __future__ import annotations

import argparse
import sys
from typing import Any

DEFAULT_KEYS_DIR = ".data/keys"
DEFAULT_KEYS_FILE = ".data/keys/table-keys.json"


def add(commands: Any) -> None:
    """Register the commands of game and wallet teams."""
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
