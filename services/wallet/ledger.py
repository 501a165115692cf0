"""Player balances in SQLite: each record id credits once (PRIMARY KEY), one transaction a batch.

An adjustment's debit is applied even when it takes a balance below zero: what to do about such a
balance is the wallet's policy; the report lists every balance below zero."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final

from services.wallet.credit import Credit

SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS credits (
    record_id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    bet_id TEXT NOT NULL,
    player_id TEXT NOT NULL,
    currency TEXT NOT NULL,
    amount INTEGER NOT NULL,
    stake INTEGER NOT NULL,
    at TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS balances (
    player_id TEXT NOT NULL,
    currency TEXT NOT NULL,
    balance INTEGER NOT NULL DEFAULT 0,
    staked INTEGER NOT NULL DEFAULT 0,
    settlements INTEGER NOT NULL DEFAULT 0,
    refunds INTEGER NOT NULL DEFAULT 0,
    adjustments INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (player_id, currency)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS positions (
    topic TEXT NOT NULL,
    partition INTEGER NOT NULL,
    next_offset INTEGER NOT NULL,
    PRIMARY KEY (topic, partition)
) WITHOUT ROWID;
"""


@dataclass(frozen=True, kw_only=True)
class Applied:
    """What a batch did: credits new to the ledger, and those it already had (skipped)."""

    new: int
    repeated: int


@dataclass(frozen=True, kw_only=True)
class Balance:
    """A player's account in one currency: what was credited, and what the bets had staked."""

    player_id: str
    currency: str
    balance: int
    staked: int
    settlements: int
    refunds: int
    adjustments: int = 0

    @property
    def net(self) -> int:
        """Credited minus staked: the player's result at the tables."""
        return self.balance - self.staked


class Ledger:
    """The wallet's SQLite file."""

    def __init__(self, path: str) -> None:
        folder = os.path.dirname(os.path.abspath(path))
        os.makedirs(folder, exist_ok=True)
        self.path = path
        self.db = sqlite3.connect(path, isolation_level=None)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.executescript(SCHEMA)
        columns = {row[1] for row in self.db.execute("PRAGMA table_info(balances)")}
        if "adjustments" not in columns:  # a ledger written before adjustments existed
            self.db.execute(
                "ALTER TABLE balances ADD COLUMN adjustments INTEGER NOT NULL DEFAULT 0"
            )

    def apply(
        self, credits: Iterable[Credit], positions: Mapping[tuple[str, int], int] | None = None
    ) -> Applied:
        """Credit a batch in one transaction, each record id once; store the read positions too."""
        new = repeated = 0
        db = self.db
        db.execute("BEGIN IMMEDIATE")
        try:
            for c in credits:
                cursor = db.execute(
                    "INSERT INTO credits VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
                    "ON CONFLICT (record_id) DO NOTHING",
                    (
                        c.record_id,
                        c.kind,
                        c.bet_id,
                        c.player_id,
                        c.currency,
                        c.amount,
                        c.stake,
                        c.at,
                    ),
                )
                if cursor.rowcount != 1:
                    repeated += 1
                    continue
                new += 1
                settled, refunded, adjusted = (
                    c.kind == "settlement",
                    c.kind == "refund",
                    c.kind == "adjustment",
                )
                db.execute(
                    "INSERT INTO balances (player_id, currency, balance, staked, settlements, "
                    "refunds, adjustments) VALUES (?, ?, ?, ?, ?, ?, ?) "
                    "ON CONFLICT (player_id, currency) DO UPDATE SET "
                    "balance = balance + excluded.balance, staked = staked + excluded.staked, "
                    "settlements = settlements + excluded.settlements, "
                    "refunds = refunds + excluded.refunds, "
                    "adjustments = adjustments + excluded.adjustments",
                    (c.player_id, c.currency, c.amount, c.stake, settled, refunded, adjusted),
                )
            for (topic, partition), offset in (positions or {}).items():
                db.execute(
                    "INSERT INTO positions VALUES (?, ?, ?) ON CONFLICT (topic, partition) "
                    "DO UPDATE SET next_offset = excluded.next_offset",
                    (topic, partition, offset),
                )
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")
        return Applied(new=new, repeated=repeated)

    def positions(self, topics: Iterable[str]) -> dict[tuple[str, int], int]:
        """Where reading stopped: the next offset of each partition read so far."""
        wanted = set(topics)
        rows = self.db.execute("SELECT topic, partition, next_offset FROM positions")
        return {(t, p): o for t, p, o in rows if t in wanted}

    def balances(self) -> list[Balance]:
        """Every player's balance per currency, by player then currency."""
        rows = self.db.execute(
            "SELECT player_id, currency, balance, staked, settlements, refunds, adjustments "
            "FROM balances ORDER BY player_id, currency"
        )
        return [
            Balance(
                player_id=p,
                currency=c,
                balance=b,
                staked=s,
                settlements=n,
                refunds=r,
                adjustments=a,
            )
            for p, c, b, s, n, r, a in rows
        ]

    def count(self) -> int:
        """How many records have been credited."""
        (n,) = self.db.execute("SELECT count(*) FROM credits").fetchone()
        return int(n)

    def close(self) -> None:
        self.db.close()
