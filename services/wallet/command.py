"""`croupier wallet`: credit settlements, refunds and adjustments to SQLite balances; report."""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from typing import TextIO

from services.security.denied import reraise
from services.settings import Settings
from services.wallet.consumer import Progress, consume
from services.wallet.ledger import Balance, Ledger


def render(balances: list[Balance], out: TextIO) -> None:
    """The balances as a plain table, amounts in minor units, with totals per currency."""
    header = ("player", "currency", "balance", "staked", "net", "settled", "refunded", "adjusted")
    print("{:<12} {:<8} {:>14} {:>14} {:>14} {:>8} {:>8} {:>8}".format(*header), file=out)
    totals: dict[str, list[int]] = {}
    for b in balances:
        print(
            f"{b.player_id:<12} {b.currency:<8} {b.balance:>14} {b.staked:>14} {b.net:>14} "
            f"{b.settlements:>8} {b.refunds:>8} {b.adjustments:>8}",
            file=out,
        )
        t = totals.setdefault(b.currency, [0, 0, 0, 0, 0])
        t[0] += b.balance
        t[1] += b.staked
        t[2] += b.settlements
        t[3] += b.refunds
        t[4] += b.adjustments
    for currency, (balance, staked, settled, refunded, adjusted) in sorted(totals.items()):
        print(
            f"{'TOTAL':<12} {currency:<8} {balance:>14} {staked:>14} {balance - staked:>14} "
            f"{settled:>8} {refunded:>8} {adjusted:>8}",
            file=out,
        )
    below = [b for b in balances if b.balance < 0]
    for b in below:
        print(
            f"below zero: {b.player_id} {b.currency} {b.balance} (an adjustment debited more "
            "than the balance held; the wallet's policy decides)",
            file=out,
        )


def _line(progress: Progress) -> str:
    unreadable = sum(progress.unreadable.values())
    return (
        f"wallet: {progress.read} records read, {progress.new} credited, {progress.repeated} "
        f"already credited (skipped by id), {unreadable} unreadable"
    )


def command(args: argparse.Namespace) -> int:
    """Consume (unless --no-consume) until caught up, or for ever with --follow; then report."""
    settings = Settings()
    ledger = Ledger(args.db)
    try:
        if not args.no_consume:
            stop = threading.Event()
            for sig in (signal.SIGINT, signal.SIGTERM):
                signal.signal(sig, lambda *_: stop.set())
            topics = [
                settings.topic_settlements,
                settings.topic_refunds,
                settings.topic_adjustments,
            ]
            try:
                progress = consume(
                    ledger,
                    settings,
                    topics,
                    follow=args.follow,
                    from_beginning=args.from_beginning,
                    stop=stop,
                    report=lambda p: print(_line(p), file=sys.stderr, flush=True),
                    group=args.group,
                )
            except LookupError as error:
                print(f"wallet: {error}; create the topics with `croupier topics`", file=sys.stderr)
                return 1
            except Exception as error:
                reraise(
                    error,
                    settings,
                    doing="credit what croupier decided",
                    resource=f"topics {', '.join(topics)}",
                    operation="Describe and Read",
                )
                print(
                    f"wallet: cannot read Kafka at {settings.kafka_bootstrap} ({error}); start "
                    "it with `make kafka-up` or set KAFKA_BOOTSTRAP",
                    file=sys.stderr,
                )
                return 1
            print(_line(progress) + f"; ledger {args.db}", file=sys.stderr)
        if args.report:
            render(ledger.balances(), sys.stdout)
    finally:
        ledger.close()
    return 0
