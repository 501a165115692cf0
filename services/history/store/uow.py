"""A projector batch's unit of work: one transaction, its positions' compare-and-set, and the
repositories that write in it.

`with UnitOfWork(...) as uow:` begins the transaction and moves the Kafka positions the batch
consumed, each only from the value this projector read (Conflict otherwise: another projector
moved them, and nothing is written); the repositories (`uow.bets`, `uow.rounds`, `uow.tables`,
`uow.figures`, `uow.outcomes`) write the batch; `uow.commit()` adds what it counted to the
counters and commits.
Leaving the block without a commit rolls everything back, positions included, so a batch is
applied whole and once, or not at all.
"""

from __future__ import annotations

from collections import Counter
from types import TracebackType
from typing import Self

from sqlalchemy import Connection, Engine, RootTransaction

from services.history import bulk, schema
from services.history.bulk import Encoder
from services.history.counters import CounterKey
from services.history.store import statements
from services.history.store.bets import Bets
from services.history.store.dialects import Dialect
from services.history.store.integrity import Outcomes
from services.history.store.report_figures import Figures
from services.history.store.tables import Tables
from services.history.store.timelines import Rounds

Position = tuple[str, int]
"""A topic partition."""
Moves = dict[Position, tuple[int, int]]
"""Each partition a batch consumed: (the position it started from, the one it ends at)."""


class Conflict(RuntimeError):
    """Another projector moved the positions this batch started from; the batch is rolled back."""


class UnitOfWork:
    """One batch's transaction: its positions moved first (`Conflict` if raced), its writes,
    and its counters at the commit."""

    db: Connection
    bets: Bets
    rounds: Rounds
    tables: Tables
    figures: Figures
    outcomes: Outcomes

    def __init__(
        self, engine: Engine, dialect: Dialect, encoder: Encoder | None, moves: Moves
    ) -> None:
        self.engine = engine
        self.dialect = dialect
        self.encoder = encoder
        self.moves = moves
        self.counts: Counter[CounterKey] = Counter()
        """What the batch counts, added to the counters at the commit."""
        self._transaction: RootTransaction | None = None

    def __enter__(self) -> Self:
        self.db = self.engine.connect()
        try:
            self._transaction = self.db.begin()
            self.dialect.begin_batch(self.db)
            self._move()
        except BaseException:
            self._end()
            raise
        self.bets = Bets(self.db, self.dialect, self.encoder, self.counts)
        self.rounds = Rounds(self.db, self.dialect, self.counts)
        self.tables = Tables(self.db, self.dialect)
        self.figures = Figures(self.db, self.dialect)
        self.outcomes = Outcomes(self.db, self.dialect)
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._end()

    def commit(self) -> None:
        """Add the batch's counts to the counters, and commit."""
        assert self._transaction is not None, "commit outside the unit of work"
        self._count()
        self._transaction.commit()
        self._transaction = None

    def rollback(self) -> None:
        """Undo everything, positions included (a temporary table made in it is gone too)."""
        transaction, self._transaction = self._transaction, None
        if transaction is None:
            return
        try:
            transaction.rollback()
        finally:
            bulk.forget_staging(self.db)

    def _end(self) -> None:
        try:
            self.rollback()
        finally:
            self.db.close()

    def _move(self) -> None:
        """Move the positions from where the batch started, or raise Conflict."""
        moves = self.moves
        if not moves:
            return
        moved = self.db.execute(
            statements.MOVE,
            [
                {"k_topic": topic, "k_partition": p, "old": old, "next_offset": new}
                for (topic, p), (old, new) in sorted(moves.items())
            ],
        )
        if moved.rowcount != len(moves):
            (topic, p), (old, _) = min(moves.items())
            raise Conflict(
                f"{len(moves) - moved.rowcount} of the {len(moves)} partitions of this batch "
                f"(e.g. {topic}[{p}] from {old}) are no longer where it started: another "
                "projector ran"
            )

    def _count(self) -> None:
        rows = [
            {"name": name, "labels": labels, "value": value}
            for (name, labels), value in sorted(self.counts.items())
            if value
        ]
        if not rows:
            return
        stmt = self.dialect.insert(schema.counters)
        self.db.execute(
            stmt.on_conflict_do_update(
                index_elements=["name", "labels"],
                set_={"value": schema.counters.c.value + stmt.excluded.value},
            ),
            rows,
        )
