"""Where PostgreSQL and SQLite differ for the read side: the `Dialect` protocol their adapters
(`postgres`, `sqlite`) follow, chosen once; and the engine's URL and set-up.

Everything else is one code path: SQLAlchemy Core, and the dialect's `INSERT ... ON CONFLICT`,
which both spell alike. A `Dialect` says how rows go in bulk (binary COPY, or executemany), how a
batch's transaction is set up, how the rounds of a batch are looked up and locked, how new bets go
into `bets`, and how the merges of bets and players tell what they inserted. `dialect_of` picks
the adapter from an engine or connection: the one place that asks which database it is.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, Final, Protocol

from sqlalchemy import Connection, Engine, Table, create_engine, delete, event
from sqlalchemy.schema import CreateTable

from services.history.bulk import Encoded, Encoder, Rows
from services.history.store.preparing import Prepared

DEFAULT_SQLITE: Final = ".data/readside.sqlite"
Merge = Callable[[Encoded, Counter[str]], None]
"""Upsert halves of bets into `bets`, counting each player's new rows (`Bets.merge`)."""


def database_url(given: str | None) -> str:
    """DATABASE_URL as given (a bare postgresql:// means psycopg 3), else the SQLite file."""
    if not given:
        Path(DEFAULT_SQLITE).parent.mkdir(parents=True, exist_ok=True)
        return f"sqlite:///{DEFAULT_SQLITE}"
    for bare in ("postgresql://", "postgres://"):
        if given.startswith(bare):
            return "postgresql+psycopg://" + given[len(bare) :]
    return given


def connect(url: str) -> Engine:
    """An engine for the URL; SQLite in WAL mode so readers never wait for the projector."""
    if url.startswith("sqlite"):
        engine = create_engine(url, connect_args={"timeout": 30})

        @event.listens_for(engine, "connect")
        def _pragmas(dbapi: Any, _: Any) -> None:
            cursor = dbapi.cursor()
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA synchronous=NORMAL")  # atomic; positions commit with the rows
            cursor.execute("PRAGMA busy_timeout=30000")
            cursor.close()

        return engine
    return create_engine(url, pool_size=4, max_overflow=8, pool_pre_ping=True)


class Dialect(Protocol):
    """What the read side does differently on one database."""

    @property
    def insert(self) -> Any:
        """The dialect's INSERT, with `on_conflict_do_update` / `on_conflict_do_nothing`."""

    @property
    def keeps_staged(self) -> bool:
        """Whether a temporary table keeps its rows past a commit (PostgreSQL's are emptied)."""

    def encoder(self, engine: Engine, table: Table) -> Encoder | None:
        """How this database takes rows of the table in bulk, made ahead of any transaction
        (None: as they are)."""

    def begin_batch(self, db: Connection) -> None:
        """Set up a projector batch's transaction, first thing in it."""

    def copy_rows(self, db: Connection, table: Table, rows: Rows | Encoded) -> None:
        """Insert rows given as a value for each column of the table, in its order."""

    def rounds_of(self, db: Connection, keys: Sequence[tuple[str, str]]) -> Iterable[Any]:
        """The rows of `rounds` of these keys that exist, locked until the commit where the
        database locks rows."""

    def add_bets(
        self, db: Connection, batch: Prepared, encoder: Encoder | None, merge: Merge
    ) -> tuple[Counter[str], int]:
        """Write a batch's bets (`Prepared`: whole, placed and parts), new rows and halves merged
        by `merge` (rows encoded again, for one COPY, by `encoder`): the new rows of each
        player, and how many new pending rows were loaded without a merge."""

    def merge_bets(self, db: Connection) -> tuple[dict[str, int], int]:
        """Merge the staged bets into `bets` (`statements.merge_bets`): the rows it inserted by
        player, and how many of the staged bets' rows are pending (placed, not decided) after."""

    def merge_players(self, db: Connection) -> int:
        """Merge the staged players into `players` (`statements.merge_players`): how many it
        inserted."""

    def snapshot(self, engine: Engine) -> Engine:
        """The engine whose transactions read several tables as one state (the report)."""


def stage(dialect: Dialect, db: Connection, staging: Table, rows: Rows | Encoded) -> None:
    """Fill the connection's temporary table (created at its first use) with these rows only."""
    made: set[str] = db.connection.info.setdefault("staged", set())
    if staging.name not in made:
        db.execute(CreateTable(staging, if_not_exists=True))
        made.add(staging.name)
    if dialect.keeps_staged:
        db.execute(delete(staging))
    dialect.copy_rows(db, staging, rows)


def load(dialect: Dialect, db: Connection, table: Table, rows: Sequence[dict[str, Any]]) -> None:
    """Insert the rows (missing columns NULL)."""
    if rows:
        names = [c.name for c in table.columns]
        dialect.copy_rows(db, table, [[row.get(n) for n in names] for row in rows])


def dialect_of(bind: Engine | Connection) -> Dialect:
    """The adapter of this database."""
    # Imported here: each adapter's module imports this one's `Dialect`.
    if bind.dialect.name == "postgresql":
        from services.history.store.postgres import PostgresDialect

        return PostgresDialect()
    from services.history.store.sqlite import SqliteDialect

    return SqliteDialect()
