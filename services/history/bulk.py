"""Many rows into a table fast: the staging tables, and rows encoded for PostgreSQL's COPY.

On PostgreSQL rows go in by binary COPY (psycopg 3), which takes tens of thousands of rows a
second where one INSERT per row, or a thousand-row VALUES list, takes a few thousand here
(measured: psycopg's parameter parsing of big statements dominated). On SQLite the standard
library's executemany is already a loop in C (each database's way is its adapter's:
`store.dialects`). Upserts stage the rows in a temporary table and merge them with one
`INSERT ... SELECT ... ON CONFLICT`, which SQLAlchemy writes for both dialects.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Final

import msgspec
import psycopg
from psycopg import pq
from psycopg._copy_base import format_row_binary  # psycopg's own binary COPY encoder (C)
from psycopg.adapt import Transformer
from sqlalchemy import BigInteger, Column, Connection, MetaData, Table
from sqlalchemy.dialects import postgresql

from services.history import schema

Row = dict[str, Any]
Rows = Sequence[Any]
"""Rows of a table's columns in order: sequences, or `array_like` Structs (`schema.BetRow`)."""
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


def values(rows: Rows) -> Sequence[Sequence[Any]]:
    """The rows as sequences of their values: an `array_like` Struct's fields as a tuple (told by
    the first row: a batch's rows are all of one kind)."""
    if rows and isinstance(rows[0], msgspec.Struct):
        return list(map(msgspec.structs.astuple, rows))
    return rows


@dataclass(frozen=True)
class Encoded:
    """Rows made ready for the database ahead of their transaction: on PostgreSQL their COPY
    data, so that the transaction only ships it (the projector encodes the next batch while the
    database writes the one before)."""

    rows: Rows
    data: bytes | None = None
    """The rows in PostgreSQL's binary COPY format (without its header and trailer)."""
    types: tuple[int, ...] = ()
    """The types (oids) of the columns `data` was encoded for."""

    def __len__(self) -> int:
        return len(self.rows)


@functools.cache
def column_types(table: Table) -> tuple[int, ...]:
    """The PostgreSQL type (oid) of each column of a table, in its order."""
    dialect = postgresql.dialect()  # type: ignore[no-untyped-call]
    types = []
    for column in table.columns:
        name = column.type.compile(dialect=dialect).split()[0].lower()
        info = psycopg.adapters.types.get(name)
        if info is None:
            raise TypeError(f"{table.name}.{column.name}: no binary COPY for SQL type {name}")
        types.append(info.oid)
    return tuple(types)


class Encoder:
    """Rows of one table's columns as PostgreSQL's binary COPY takes them: psycopg's own binary
    dumpers (C), made on a connection of the database, so that text is written in its client
    encoding, UTF-8 straight from what Python keeps of a str. Binary, not text: no escaping to
    search for on this side and no parsing on the server's, which only checks each value
    (docs/DESIGN.md, "Binary COPY"). Made once, it never asks its connection again."""

    def __init__(self, connection: psycopg.Connection[Any], table: Table) -> None:
        self.types = column_types(table)
        self.dumpers = Transformer(connection)
        self.dumpers.set_dumper_types(list(self.types), pq.Format.BINARY)

    def add(self, rows: Rows, out: bytearray) -> None:
        dumpers = self.dumpers
        given: Iterable[Sequence[Any]] = rows
        if rows and isinstance(rows[0], msgspec.Struct):
            given = map(msgspec.structs.astuple, rows)
        for row in given:
            format_row_binary(row, dumpers, out)


class Encoding:
    """Rows encoded as they are added, for one COPY (with an encoder: their COPY data)."""

    def __init__(self, encoder: Encoder | None) -> None:
        self.rows: list[Any] = []
        self.encoder = encoder
        self.data = bytearray()

    def add(self, rows: Rows) -> None:
        self.rows.extend(rows)
        if self.encoder is not None:
            self.encoder.add(rows, self.data)

    def done(self) -> Encoded:
        if self.encoder is None or not self.rows:
            return Encoded(self.rows)
        return Encoded(self.rows, bytes(self.data), self.encoder.types)


def encoded(encoder: Encoder | None, rows: Rows) -> Encoded:
    """The rows, with their COPY data when given an encoder (PostgreSQL)."""
    encoding = Encoding(encoder)
    encoding.add(rows)
    return encoding.done()


_SIGNATURE: Final = b"PGCOPY\n\xff\r\n\0" + bytes(8)
"""The header of PostgreSQL's binary COPY format: its signature, no flags, no extension."""
_TRAILER: Final = b"\xff\xff"


def ship(connection: psycopg.Connection[Any], into: str, data: bytes) -> None:
    """COPY rows encoded by an `Encoder` into a table (`into`: its name and columns)."""
    with (
        connection.cursor() as cursor,
        cursor.copy(f"COPY {into} FROM STDIN (FORMAT BINARY)") as copy,
    ):
        copy.write(_SIGNATURE)
        copy.write(data)
        copy.write(_TRAILER)


def forget_staging(db: Connection) -> None:
    """After a rollback: a temporary table created in it is gone."""
    with contextlib.suppress(Exception):  # a connection lost forgets its tables by itself
        db.connection.info.pop("staged", None)
