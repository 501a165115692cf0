"""The read side's database, written by the projector: one transaction per batch, with positions.

A batch's rows, its counters and the Kafka positions it consumed commit together or not at all
(`uow.UnitOfWork`); the positions move only from the values this projector read, so a second
projector on the same database can never apply a batch twice. Each aggregate has its repository
(`bets`, `timelines`, `tables`, `report_figures`, `integrity`); where PostgreSQL and SQLite
differ, their adapters (`postgres`, `sqlite`: a `dialects.Dialect` each) do, chosen once when the
store is made.
"""

from __future__ import annotations

from sqlalchemy import Engine, select

from schemas.events import RoundCorrected, RoundVoided
from services.history import counters, schema
from services.history.projection import Changes
from services.history.store.dialects import DEFAULT_SQLITE, connect, database_url, dialect_of
from services.history.store.preparing import Prepared, Preparing
from services.history.store.report_figures import of_batch
from services.history.store.timelines import RoundKey
from services.history.store.uow import Conflict, Moves, Position, UnitOfWork
from services.history.views import Round
from services.statistics.counted import Counted

__all__ = [
    "DEFAULT_SQLITE",
    "Conflict",
    "Position",
    "Prepared",
    "Preparing",
    "Store",
    "apply",
    "connect",
    "database_url",
]


class Store:
    """Positions, bets, rounds, tables, counters and the report's figures of the read side."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.dialect = dialect_of(engine)
        self.encoder = self.dialect.encoder(engine, schema.bets)
        """How this database takes rows of `bets` in bulk (on PostgreSQL made on a connection)."""

    def positions(self) -> dict[Position, int]:
        with self.engine.connect() as db:
            rows = db.execute(select(schema.positions)).all()
        return {(row.topic, row.partition): row.next_offset for row in rows}

    def begin_at(self, beginnings: dict[Position, int]) -> dict[Position, int]:
        """The stored positions, a partition never projected starting at its beginning."""
        with self.engine.begin() as db:
            fresh = [
                {"topic": topic, "partition": p, "next_offset": offset}
                for (topic, p), offset in sorted(beginnings.items())
            ]
            if fresh:
                db.execute(self.dialect.insert(schema.positions).on_conflict_do_nothing(), fresh)
        return self.positions()

    def preparing(self, changes: Changes) -> Preparing:
        """A batch's rows encoded while it is still being fed (`Preparing.take`)."""
        return Preparing(self.encoder, changes)

    def prepare(self, changes: Changes) -> Prepared:
        """What of a batch can be made ready outside its transaction: its bets' rows, encoded for
        the database; a bet read with its decision in one batch is one whole row."""
        return self.preparing(changes).done()

    def unit(self, moves: Moves) -> UnitOfWork:
        """A batch's unit of work, moving these positions."""
        return UnitOfWork(self.engine, self.dialect, self.encoder, moves)

    def write(self, batch: Changes | Prepared, moves: Moves) -> None:
        """Apply one batch and move its positions, in one transaction; Conflict if raced."""
        ready = batch if isinstance(batch, Prepared) else self.prepare(batch)
        with self.unit(moves) as uow:
            apply(uow, ready)
            uow.commit()


def apply(uow: UnitOfWork, batch: Prepared) -> None:
    """The writes of one batch in its unit of work: a few statements whatever its size."""
    changes = batch.changes
    uow.counts.update(counters.of_batch(changes))
    rounds, fated = _rounds(uow, changes)
    fresh = uow.bets.add(batch)
    uow.bets.add_adjustments(changes)
    uow.bets.count_players(changes, fresh)
    uow.tables.add(changes)
    games = {key: rnd.game for key, rnd in rounds.items() if rnd.game is not None}
    numbers = uow.figures.corrected_so_far(fated) if fated else {}
    outcomes = {key: outcome for key, outcome in fated.items() if outcome is not None}
    uow.figures.add(of_batch(changes, games, outcomes, numbers))
    _integrity(uow, changes)


def _integrity(uow: UnitOfWork, changes: Changes) -> None:
    """Each round's outcome integrity state, moved by the batch's accepted round events in order
    (`services.statistics.counted`, the very code of `croupier integrity`)."""
    keys = sorted({(e.table_id, e.round_id) for e, _ in changes.round_events})
    if not keys:
        return
    known = uow.outcomes.get(keys)
    counted = Counted(known)
    for event_, _ in changes.round_events:
        counted.accept(event_)
    uow.outcomes.put(counted, keys, known)


def _rounds(
    uow: UnitOfWork, changes: Changes
) -> tuple[dict[RoundKey, Round], dict[RoundKey, list[int | str] | None]]:
    """Apply the round events in order; every round a row names exists afterwards, and every
    round the batch touches moves to a new `version` (what a cached recall checks). The rounds,
    and the outcome before the batch of the rounds from before it that it corrects or voids (the
    report's corrections are told from them)."""
    keys = changes.rounds_named()
    known = uow.rounds.get(sorted(keys))
    rounds = {key: rnd for key, (rnd, _) in known.items()} | {
        key: Round(*key) for key in keys - known.keys()
    }
    fated: dict[RoundKey, list[int | str] | None] = {}
    for event_, _ in changes.round_events:
        key = (event_.table_id, event_.round_id)
        if isinstance(event_, RoundCorrected | RoundVoided) and key in known:
            before = known[key][0]
            outcome = before.dice or before.discs
            fated.setdefault(key, list(outcome) if outcome else None)
    for event_, _ in changes.round_events:
        rounds[(event_.table_id, event_.round_id)].apply(event_)
    uow.rounds.add(rounds, known)
    return rounds, fated
