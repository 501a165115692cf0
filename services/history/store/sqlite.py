"""The read side on SQLite (sqlite3): one writer at a time, executemany, every bet merged.

The standard library's executemany is already a loop in C, so bulk rows go in as they are; a
batch's new bets and halves are all merged by one statement (no COPY to load them by), and the
merges' new rows are told by a lookup of the staged rows before them (SQLite has one writer: no
other projector can insert meanwhile).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from sqlalchemy import Connection, Engine, Table
from sqlalchemy.dialects import sqlite

from services.history import bulk
from services.history.bulk import Encoded, Encoder, Rows
from services.history.store import statements
from services.history.store.dialects import Merge
from services.history.store.preparing import Prepared


class SqliteDialect:
    """SQLite (sqlite3): one writer at a time, the standard library's executemany for bulk
    rows (a loop in C already), every bet merged."""

    def __init__(self) -> None:
        self.insert: Any = sqlite.insert
        self.keeps_staged = True

    def encoder(self, engine: Engine, table: Table) -> Encoder | None:
        return None

    def begin_batch(self, db: Connection) -> None:
        return None

    def copy_rows(self, db: Connection, table: Table, rows: Rows | Encoded) -> None:
        given = rows.rows if isinstance(rows, Encoded) else rows
        if len(given):
            names = [c.name for c in table.columns]
            db.execute(
                table.insert(), [dict(zip(names, row, strict=True)) for row in bulk.values(given)]
            )

    def rounds_of(self, db: Connection, keys: Sequence[tuple[str, str]]) -> Iterable[Any]:
        for chunk in bulk.chunks(keys):  # one writer at a time: the whole transaction
            yield from db.execute(statements.rounds_in(chunk)).all()

    def add_bets(
        self, db: Connection, batch: Prepared, encoder: Encoder | None, merge: Merge
    ) -> tuple[Counter[str], int]:
        fresh: Counter[str] = Counter()
        every = [*batch.whole.rows, *batch.placed.rows, *batch.parts.rows]
        if every:
            merge(Encoded(every), fresh)
        return fresh, 0

    def merge_bets(self, db: Connection) -> tuple[dict[str, int], int]:
        fresh = dict(db.execute(statements.NEW_BY_PLAYER).tuples().all())
        db.execute(statements.merge_bets(self.insert))
        return fresh, db.execute(statements.PENDING_TOUCHED).scalar_one()

    def merge_players(self, db: Connection) -> int:
        added: int = db.execute(statements.NEW_PLAYERS).scalar_one()
        db.execute(statements.merge_players(self.insert))
        return added

    def snapshot(self, engine: Engine) -> Engine:
        return engine  # each read sees whole batches: the projector's transactions are atomic
