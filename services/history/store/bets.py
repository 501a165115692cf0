"""The bets in the database, with their adjustments and their players' counts (a repository of a
batch).

New rows go in the way their database takes them fastest (`Dialect.add_bets`); halves of bets
whose other half is in another batch are staged and merged by one `INSERT ... SELECT ... ON
CONFLICT`, which also tells each player's new rows (`players.bets`, a history's total) and how
the pending bets moved.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from sqlalchemy import Connection

from services.history import bulk, schema
from services.history.bulk import Encoded, Encoder
from services.history.projection import Changes
from services.history.store import statements
from services.history.store.dialects import Dialect, stage
from services.history.store.preparing import Prepared

PENDING = ("croupier_read_pending", "")
"""The counter of bets placed and not decided."""


class Bets:
    """The rows of `bets`, `adjustments` and `players` in a batch's transaction."""

    def __init__(
        self, db: Connection, dialect: Dialect, encoder: Encoder | None, counts: Counter[Any]
    ) -> None:
        self.db = db
        self.dialect = dialect
        self.encoder = encoder
        self.counts = counts

    def add(self, batch: Prepared) -> Counter[str]:
        """Write the bets of a batch: the new rows of each player."""
        fresh, pending = self.dialect.add_bets(self.db, batch, self.encoder, self.merge)
        self.counts[PENDING] += pending
        return fresh

    def merge(self, rows: Encoded, fresh: Counter[str]) -> None:
        """Upsert rows (halves of bets) in one statement, counting the new rows of each player
        and how many of the rows it touched are pending (placed, not decided) after against
        before: exact whatever the rows repeat."""
        stage(self.dialect, self.db, bulk.STAGE_BETS, rows)
        before: int = self.db.execute(statements.PENDING_TOUCHED).scalar_one()
        new, after = self.dialect.merge_bets(self.db)
        fresh.update(new)
        self.counts[PENDING] += after - before

    def add_adjustments(self, changes: Changes) -> None:
        """Insert the adjustments, each id once (a redelivered one changes nothing)."""
        rows = [changes.adjustments[key] for key in sorted(changes.adjustments)]
        if rows:
            stmt = self.dialect.insert(schema.adjustments).on_conflict_do_nothing(
                index_elements=["adjustment_id"]
            )
            self.db.execute(stmt, rows)

    def count_players(self, changes: Changes, fresh: Counter[str]) -> None:
        """Every player named, with the count of its bets (a history's total, kept here)."""
        ids = changes.players_named()
        ids.update(fresh)
        if not ids:
            return
        stage(self.dialect, self.db, bulk.STAGE_PLAYERS, [(p, fresh[p]) for p in sorted(ids)])
        self.counts[("croupier_read_players", "")] += self.dialect.merge_players(self.db)
