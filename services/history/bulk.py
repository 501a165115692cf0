"""Many rows into a table fast, the same statements on PostgreSQL and SQLite.

On PostgreSQL rows go in by COPY (psycopg 3), which takes tens of thousands of rows a second where
one INSERT per row, or a thousand-row VALUES list, takes a few thousand here (measured: psycopg's
parameter parsing of big statements dominated). On SQLite the standard library's executemany is
already a loop in C. Upserts stage the rows in a temporary table and merge them with one
`INSERT ... SELECT ... ON CONFLICT`, which SQLAlchemy writes for both dialects.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Final, cast

import psycopg
from sqlalchemy import Column, Connection, Integer, MetaData, Table, delete, func, select, true
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.schema import CreateTable

from services.history import schema

Row = dict[str, Any]
_STAGING: Final = MetaData()


def _staging(table: Table) -> Table:
    """A temporary twin of a table, without keys, plus `part` to tell apart kinds of rows."""
    return Table(
        f"stage_{table.name}",
        _STAGING,
        Column("part", Integer, nullable=False),
        *(Column(c.name, c.type) for c in table.columns),
        prefixes=["TEMPORARY"],
    )


STAGE_BETS: Final = _staging(schema.bets)
STAGE_PLAYERS: Final = _staging(schema.players)


def insert_of(db: Connection) -> Any:
    """The dialect's INSERT, with `on_conflict_do_update` / `on_conflict_do_nothing`."""
    return postgresql.insert if db.dialect.name == "postgresql" else sqlite.insert


def load(db: Connection, table: Table, rows: Sequence[Row], extra: Row | None = None) -> None:
    """Insert the rows (missing columns NULL; `extra` added to every row)."""
    if not rows:
        return
    names = [c.name for c in table.columns]
    if db.dialect.name == "postgresql":
        raw = cast(psycopg.Connection[Any], db.connection.dbapi_connection)
        with raw.cursor() as cursor:
            sql = f"COPY {table.name} ({', '.join(names)}) FROM STDIN"
            with cursor.copy(sql) as copy:
                fixed = extra or {}
                for row in rows:
                    copy.write_row([fixed[n] if n in fixed else row.get(n) for n in names])
        return
    full = [{n: row.get(n) for n in names} | (extra or {}) for row in rows]
    db.execute(table.insert(), full)


def stage(db: Connection, staging: Table, parts: Iterable[Sequence[Row]]) -> None:
    """Fill the (per connection) temporary table, part 0, 1, ... in order."""
    db.execute(CreateTable(staging, if_not_exists=True))
    db.execute(delete(staging))
    for n, rows in enumerate(parts):
        load(db, staging, rows, {"part": n})


def merge(
    db: Connection, staging: Table, target: Table, part: int, key: str, update: Sequence[str]
) -> int:
    """Upsert part `part` of the staging table into the target; the number of rows inserted
    or updated (with no `update` columns: the number of new rows). RETURNING counts them: the
    psycopg dialect reports no rowcount for these statements."""
    names = [c.name for c in target.columns]
    rows = select(*(staging.c[n] for n in names)).where(staging.c.part == part, true())
    stmt = insert_of(db)(target).from_select(names, rows)
    if update:
        stmt = stmt.on_conflict_do_update(
            index_elements=[key], set_={c: stmt.excluded[c] for c in update}
        )
    else:
        stmt = stmt.on_conflict_do_nothing(index_elements=[key])
    return len(db.execute(stmt.returning(target.c[key])).all())


def matched(db: Connection, staging: Table, target: Table, part: int, key: str, *where: Any) -> int:
    """How many rows of part `part` of the staging table already have a row in the target."""
    query = (
        select(func.count())
        .select_from(staging.join(target, target.c[key] == staging.c[key]))
        .where(staging.c.part == part, *where)
    )
    found: int = db.execute(query).scalar_one()
    return found
