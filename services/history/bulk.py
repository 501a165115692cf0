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
from typing import Any, Final, TypeAlias, cast

import psycopg
from psycopg import abc
from psycopg._copy_base import format_row_text  # psycopg's own COPY text encoder (C)
from psycopg.adapt import Transformer
from sqlalchemy import BigInteger, Column, Connection, Engine, MetaData, Table, delete
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


Encoder: TypeAlias = abc.Transformer
"""psycopg's dumpers of one database (`encoder`): str, int and None as COPY's text format wants
them, text in the connection's client encoding."""


def encoder(engine: Engine) -> Encoder | None:
    """The COPY text encoder of this database (None on SQLite, which takes rows as they are),
    made on one of its connections: its text is then written in that connection's client
    encoding, and, when that is UTF8, straight from the UTF-8 Python keeps of a str. One made
    without a connection encodes every str through the codecs into a bytes object of its own:
    a row of `bets` 1.87 µs against 1.36 (docs/DESIGN.md, "Cut by instruction counts"). Its
    dumpers of str and int are made here, so it never asks the connection again (rows of
    `bets` hold nothing else)."""
    if engine.dialect.name != "postgresql":
        return None
    with engine.connect() as db:
        made = Transformer(cast(psycopg.Connection[Any], db.connection.dbapi_connection))
        format_row_text(("", 0, None), made, bytearray())  # its dumpers made while connected
    return made


class Encoding:
    """Rows encoded as they are added, for one COPY (with an encoder: their COPY text)."""

    def __init__(self, encoder: Encoder | None) -> None:
        self.rows: list[Sequence[Any]] = []
        self.encoder = encoder
        self.text = bytearray() if encoder is not None else None

    def add(self, rows: Sequence[Sequence[Any]]) -> None:
        self.rows.extend(rows)
        if self.text is not None:
            out, encoder = self.text, self.encoder
            for row in rows:
                format_row_text(row, encoder, out)

    def done(self) -> Encoded:
        text = self.text
        return Encoded(self.rows, bytes(text) if text is not None and self.rows else None)


def encoded(encoder: Encoder | None, rows: Sequence[Sequence[Any]]) -> Encoded:
    """The rows, with their COPY text when given an encoder (PostgreSQL)."""
    encoding = Encoding(encoder)
    encoding.add(rows)
    return encoding.done()


def copy_rows(db: Connection, table: Table, rows: Sequence[Sequence[Any]] | Encoded) -> None:
    """Insert rows given as a value for each column of the table, in its order."""
    if not len(rows):
        return
    names = [c.name for c in table.columns]
    if db.dialect.name == "postgresql":
        raw = cast(psycopg.Connection[Any], db.connection.dbapi_connection)
        ready = rows if isinstance(rows, Encoded) else Encoded(rows)
        if ready.text is None:  # encoded here, on the transaction's connection
            ready = encoded(Transformer(raw), ready.rows)
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
