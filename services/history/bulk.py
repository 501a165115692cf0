"""Many rows into a table fast, the same statements on PostgreSQL and SQLite.

On PostgreSQL rows go in by COPY (psycopg 3), which takes tens of thousands of rows a second where
one INSERT per row, or a thousand-row VALUES list, takes a few thousand here (measured: psycopg's
parameter parsing of big statements dominated). On SQLite the standard library's executemany is
already a loop in C. Upserts stage the rows in a temporary table and merge them with one
`INSERT ... SELECT ... ON CONFLICT`, which SQLAlchemy writes for both dialects.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Final, cast

import psycopg
from psycopg._copy_base import format_row_text  # psycopg's own COPY text encoder (C)
from psycopg.adapt import Transformer
from sqlalchemy import BigInteger, Column, Connection, MetaData, Table, delete
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.schema import CreateTable

from services.history import schema

Row = dict[str, Any]
CHUNK: Final = 400
"""Keys looked up per statement where a list of them goes into an IN (...)."""


def chunks(items: Sequence[Any], size: int = CHUNK) -> Iterator[Sequence[Any]]:
    """The items in consecutive slices of at most `size`."""
    for start in range(0, len(items), size):
        yield items[start : start + size]


_STAGING: Final = MetaData()


def _staging(name: str, *columns: Column[Any]) -> Table:
    """A temporary table of a connection, emptied at each commit on PostgreSQL."""
    return Table(
        name,
        _STAGING,
        *columns,
        prefixes=["TEMPORARY"],
        postgresql_on_commit="DELETE ROWS",
    )


STAGE_BETS: Final = _staging("stage_bets", *(Column(c.name, c.type) for c in schema.bets.columns))
STAGE_ROUNDS: Final = _staging(
    "stage_rounds", *(Column(c.name, c.type) for c in schema.rounds.columns if c.name != "version")
)
STAGE_PLAYERS: Final = _staging(
    "stage_players", Column("player_id", schema.Id), Column("bets", BigInteger)
)


def insert_of(db: Connection) -> Any:
    """The dialect's INSERT, with `on_conflict_do_update` / `on_conflict_do_nothing`."""
    return postgresql.insert if db.dialect.name == "postgresql" else sqlite.insert


def load(db: Connection, table: Table, rows: Sequence[Row]) -> None:
    """Insert the rows (missing columns NULL)."""
    if rows:
        names = [c.name for c in table.columns]
        copy_rows(db, table, [[row.get(n) for n in names] for row in rows])


@dataclass(frozen=True)
class Encoded:
    """Rows made ready for the database ahead of their transaction: on PostgreSQL their COPY
    text, so that the transaction only ships it (the projector encodes the next batch while the
    database writes the one before)."""

    rows: Sequence[Sequence[Any]]
    text: bytes | None = None

    def __len__(self) -> int:
        return len(self.rows)


_TEXT: Final = Transformer()
"""Dumps str, int and None as COPY's text format wants them (no connection needed)."""


class Encoding:
    """Rows encoded as they are added, for one COPY (on PostgreSQL: their COPY text)."""

    def __init__(self, dialect: str) -> None:
        self.rows: list[Sequence[Any]] = []
        self.text = bytearray() if dialect == "postgresql" else None

    def add(self, rows: Sequence[Sequence[Any]]) -> None:
        self.rows.extend(rows)
        if self.text is not None:
            out = self.text
            for row in rows:
                format_row_text(row, _TEXT, out)

    def done(self) -> Encoded:
        text = self.text
        return Encoded(self.rows, bytes(text) if text is not None and self.rows else None)


def encoded(dialect: str, rows: Sequence[Sequence[Any]]) -> Encoded:
    """The rows, with their COPY text when the database is PostgreSQL."""
    encoding = Encoding(dialect)
    encoding.add(rows)
    return encoding.done()


def copy_rows(db: Connection, table: Table, rows: Sequence[Sequence[Any]] | Encoded) -> None:
    """Insert rows given as a value for each column of the table, in its order."""
    if not len(rows):
        return
    names = [c.name for c in table.columns]
    if db.dialect.name == "postgresql":
        ready = rows if isinstance(rows, Encoded) else encoded("postgresql", rows)
        if ready.text is None:
            ready = encoded("postgresql", ready.rows)
        raw = cast(psycopg.Connection[Any], db.connection.dbapi_connection)
        sql = f"COPY {table.name} ({', '.join(names)}) FROM STDIN"
        with raw.cursor() as cursor, cursor.copy(sql) as copy:
            copy.write(ready.text or b"")
        return
    given = rows.rows if isinstance(rows, Encoded) else rows
    db.execute(table.insert(), [dict(zip(names, row, strict=True)) for row in given])


def stage(db: Connection, staging: Table, rows: Sequence[Sequence[Any]] | Encoded) -> None:
    """Fill the connection's temporary table (created at its first use) with these rows only."""
    made: set[str] = db.connection.info.setdefault("staged", set())
    if staging.name not in made:
        db.execute(CreateTable(staging, if_not_exists=True))
        made.add(staging.name)
    if db.dialect.name != "postgresql":  # PostgreSQL empties it at every commit
        db.execute(delete(staging))
    copy_rows(db, staging, rows)


def forget_staging(db: Connection) -> None:
    """After a rollback: a temporary table created in it is gone."""
    with contextlib.suppress(Exception):  # a connection lost forgets its tables by itself
        db.connection.info.pop("staged", None)
