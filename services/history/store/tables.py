"""The tables in the database: each one's game and last board (a repository of a batch)."""

from __future__ import annotations

from sqlalchemy import Connection

from services.history import schema
from services.history.projection import Changes
from services.history.store.dialects import Dialect


class Tables:
    """The rows of `tables` in a batch's transaction: each table's game and last board."""

    def __init__(self, db: Connection, dialect: Dialect) -> None:
        self.db = db
        self.insert = dialect.insert

    def add(self, changes: Changes) -> None:
        games = {e.table_id: e.game for e, _ in changes.round_events if hasattr(e, "game")}
        for table_id, game in sorted(games.items()):
            if table_id not in changes.boards:
                stmt = self.insert(schema.tables).values(table_id=table_id, game=game, stats=None)
                self.db.execute(stmt.on_conflict_do_nothing())
        for table_id, stats in sorted(changes.boards.items()):
            raw = changes.raw_boards[table_id].decode()
            stmt = self.insert(schema.tables).values(table_id=table_id, game=stats.game, stats=raw)
            self.db.execute(
                stmt.on_conflict_do_update(
                    index_elements=["table_id"],
                    set_={"game": stmt.excluded.game, "stats": stmt.excluded.stats},
                )
            )
