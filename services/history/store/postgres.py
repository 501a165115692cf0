"""The read side on PostgreSQL (psycopg 3): binary COPY, arrays of keys, `RETURNING`.

New bets are loaded by COPY straight into `bets` (each load in a savepoint, merged should one row
be there already); the rounds of a batch and the pending placements are looked up by arrays of
keys joined to their table (a long list of keys cost more to plan than to run); the merges tell
what they inserted by their own `RETURNING` (a row inserted has no xmax), so that a projector
beside this one is waited for, never counted twice. docs/DESIGN.md, "The read side on a database".
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from operator import attrgetter
from typing import Any, Final, cast

import psycopg
from sqlalchemy import Boolean, Connection, Engine, Table, func, literal_column, select, text
from sqlalchemy.dialects import postgresql
from sqlalchemy.exc import IntegrityError

from services.history import schema
from services.history.bulk import Encoded, Encoder, Rows, column_types, encoded, ship
from services.history.store import statements
from services.history.store.dialects import Merge
from services.history.store.preparing import Prepared

_PLAYER_OF: Final = attrgetter("player_id")
_KEY_OF: Final = attrgetter("table_id", "round_id", "bet_id")
"""A bet row's key (the primary key of `bets`)."""
_THERE: Final = text(
    "SELECT b.table_id, b.round_id, b.bet_id FROM unnest(CAST(:t AS text[]), CAST(:r AS text[]), "
    "CAST(:b AS text[])) AS k(table_id, round_id, bet_id) JOIN bets b ON b.table_id = k.table_id "
    "AND b.round_id = k.round_id AND b.bet_id = k.bet_id"
)
_ROUNDS_OF: Final = text(
    "SELECT r.* FROM unnest(CAST(:t AS text[]), CAST(:r AS text[])) AS k(table_id, round_id) "
    "JOIN rounds r ON r.table_id = k.table_id AND r.round_id = k.round_id "
    "ORDER BY r.table_id, r.round_id FOR UPDATE OF r"
)
"""The rows of these rounds, locked in key order until the commit: they are rewritten from
what is read, and a second projector sharing the partitions may touch one of them too."""
_INSERTED: Final = literal_column("xmax = 0", Boolean)
"""In PostgreSQL's RETURNING of an upsert: the row was inserted, not updated."""


def _raw(db: Connection) -> psycopg.Connection[Any]:
    return cast(psycopg.Connection[Any], db.connection.dbapi_connection)


class PostgresDialect:
    """PostgreSQL: binary COPY for bulk rows, arrays of keys for lookups, counts by RETURNING."""

    def __init__(self) -> None:
        self.insert: Any = postgresql.insert
        self.keeps_staged = False  # the staging tables are ON COMMIT DELETE ROWS

    def encoder(self, engine: Engine, table: Table) -> Encoder | None:
        """psycopg's binary dumpers for the table's columns (connects once, to make it)."""
        with engine.connect() as db:
            return Encoder(_raw(db), table)

    def begin_batch(self, db: Connection) -> None:
        # Safe for exactly once: a commit lost in a server crash loses its positions too.
        db.execute(text("SET LOCAL synchronous_commit = off"))
        # A batch's rows are looked up by key in the big tables, never by scanning them:
        # without statistics of the staging tables the planner would hash whole tables.
        db.execute(text("SET LOCAL enable_hashjoin = off"))
        db.execute(text("SET LOCAL enable_mergejoin = off"))

    def copy_rows(self, db: Connection, table: Table, rows: Rows | Encoded) -> None:
        if not len(rows):
            return
        names = [c.name for c in table.columns]
        raw = _raw(db)
        ready = rows if isinstance(rows, Encoded) else Encoded(rows)
        if ready.data is None or ready.types != column_types(table):  # encoded here
            ready = encoded(Encoder(raw, table), ready.rows)
        ship(raw, f"{table.name} ({', '.join(names)})", ready.data or b"")

    def rounds_of(self, db: Connection, keys: Sequence[tuple[str, str]]) -> Iterable[Any]:
        if not keys:
            return []
        tables, rounds = zip(*keys, strict=True)
        return db.execute(_ROUNDS_OF, {"t": list(tables), "r": list(rounds)}).all()

    def add_bets(
        self, db: Connection, batch: Prepared, encoder: Encoder | None, merge: Merge
    ) -> tuple[Counter[str], int]:
        """The new rows (whole, or placed and pending) loaded straight into the table, the
        decisions of bets placed before merged into their rows in one statement."""
        fresh: Counter[str] = Counter()
        merging = [batch.parts] if len(batch.parts) else []
        if len(batch.whole) and self._copied(db, batch.whole):
            fresh.update(map(_PLAYER_OF, batch.whole.rows))
        elif len(batch.whole):
            merging.append(batch.whole)
        placed = batch.placed
        there = self._there(db, [_KEY_OF(row) for row in placed.rows])
        if there:  # decided in a batch before (its decision read first): merged into that row
            merging.append(Encoded([row for row in placed.rows if _KEY_OF(row) in there]))
            placed = encoded(encoder, [row for row in placed.rows if _KEY_OF(row) not in there])
        pending = len(placed)
        if pending:  # none has a row: just looked up, and not among the whole ones
            self.copy_rows(db, schema.bets, placed)
            fresh.update(map(_PLAYER_OF, placed.rows))
        if len(merging) == 1:
            merge(merging[0], fresh)
        elif merging:
            rows = [row for part in merging for row in part.rows]
            merge(encoded(encoder, rows), fresh)
        return fresh, pending

    def _there(self, db: Connection, keys: list[tuple[str, str, str]]) -> set[tuple[str, str, str]]:
        """Which of these bets (table, round, bet) have a row already."""
        if not keys:
            return set()
        tables, rounds, bets = zip(*keys, strict=True)
        found = db.execute(_THERE, {"t": list(tables), "r": list(rounds), "b": list(bets)})
        return set(found.tuples())

    def _copied(self, db: Connection, rows: Encoded) -> bool:
        """COPY new rows into bets; False (nothing written) if one is there already (one id on
        two tables, say): they are merged."""
        try:
            with db.begin_nested():
                self.copy_rows(db, schema.bets, rows)
        except (IntegrityError, psycopg.errors.UniqueViolation):
            return False
        return True

    def merge_bets(self, db: Connection) -> tuple[dict[str, int], int]:
        # Told by the merge's own lookups and summed by player in the database.
        b = schema.bets
        merged_rows = (
            statements.merge_bets(self.insert)
            .returning(
                b.c.player_id.label("player_id"),
                _INSERTED.label("new"),
                (b.c.placed_at.is_not(None) & b.c.decided_at.is_(None)).label("pending"),
            )
            .cte("merged")
        )
        counted = select(
            merged_rows.c.player_id,
            func.count().filter(merged_rows.c.new),
            func.count().filter(merged_rows.c.pending),
        ).group_by(merged_rows.c.player_id)
        fresh: dict[str, int] = {}
        after = 0
        for player_id, new, pending in db.execute(counted):
            fresh[player_id] = new
            after += pending
        return fresh, after

    def merge_players(self, db: Connection) -> int:
        # Told by the upsert itself: a player a projector beside this one inserts meanwhile is
        # waited for and counted by that one only.
        merge = statements.merge_players(self.insert).returning(_INSERTED)
        return sum(db.execute(merge).scalars())

    def snapshot(self, engine: Engine) -> Engine:
        # A report reads its three tables in one snapshot.
        return engine.execution_options(isolation_level="REPEATABLE READ", postgresql_readonly=True)
