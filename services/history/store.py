"""The read side's database, written by the projector: one transaction per batch, with positions.

One code path for PostgreSQL (psycopg 3) and SQLite (sqlite3): SQLAlchemy Core, and the dialect's
`INSERT ... ON CONFLICT`, which both spell alike. A batch's rows, its counters and the Kafka
positions it consumed commit together or not at all; the positions move only from the values this
projector read, so a second projector on the same database can never apply a batch twice.
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass
from operator import attrgetter
from pathlib import Path
from typing import Any, Final

import msgspec
import psycopg
from sqlalchemy import (
    Boolean,
    Connection,
    Engine,
    and_,
    bindparam,
    case,
    create_engine,
    event,
    func,
    literal_column,
    select,
    text,
    true,
    tuple_,
    update,
)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import IntegrityError

from schemas.events import RoundCorrected, RoundVoided
from services.history import bulk, counters, report, schema
from services.history.counters import CounterKey
from services.history.projection import Changes
from services.history.rows import Row, json_text
from services.history.schema import BET_COLUMNS, DECIDED, PLACED
from services.history.views import Round

log = logging.getLogger("croupier.store")
DEFAULT_SQLITE: Final = ".data/readside.sqlite"
Position = tuple[str, int]
"""A topic partition."""


class Conflict(RuntimeError):
    """Another projector moved the positions this batch started from; the batch is rolled back."""


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


def _insert(engine: Engine | Connection) -> Any:
    return postgresql.insert if engine.dialect.name == "postgresql" else sqlite.insert


@dataclass(frozen=True)
class Prepared:
    """A batch made ready for its transaction: its changes and its bets' rows, encoded."""

    changes: Changes
    whole: bulk.Encoded
    """Bets placed and decided in this batch: new rows, loaded as they are."""
    placed: bulk.Encoded
    """Bets placed in this batch and decided in a later one: new rows too, pending."""
    parts: bulk.Encoded
    """Decisions of bets not placed in this batch (placed before, or never, as a late bet's
    refund): merged into their rows, or new rows."""


class Preparing:
    """A batch made ready as it is fed: `take` encodes the rows made whole since it last ran
    (final once made), `done` the halves left when the batch ends, whose other half is in
    another batch: the bets placed and not decided yet, and the decisions of bets placed
    before."""

    def __init__(self, encoder: bulk.Encoder | None, changes: Changes) -> None:
        self.encoder = encoder
        self.changes = changes
        self.whole = bulk.Encoding(encoder)
        self.taken = 0

    def take(self) -> None:
        rows = self.changes.pairs.joined
        if len(rows) > self.taken:
            self.whole.add(rows[self.taken :])
            self.taken = len(rows)

    def done(self) -> Prepared:
        self.take()
        changes = self.changes
        return Prepared(
            changes,
            self.whole.done(),
            bulk.encoded(self.encoder, changes.pairs.pending()),
            bulk.encoded(self.encoder, changes.pairs.parts()),
        )


class Store:
    """Positions, bets, rounds, tables and counters of the read side."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.insert = _insert(engine)
        self.encoder = bulk.encoder(engine, schema.bets)
        """How this database takes rows of `bets` by COPY (connects once, to make it)."""

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
                db.execute(self.insert(schema.positions).on_conflict_do_nothing(), fresh)
        return self.positions()

    def preparing(self, changes: Changes) -> Preparing:
        """A batch's rows encoded while it is still being fed (`Preparing.take`)."""
        return Preparing(self.encoder, changes)

    def prepare(self, changes: Changes) -> Prepared:
        """What of a batch can be made ready outside its transaction: its bets' rows, encoded for
        the database; a bet read with its decision in one batch is one whole row."""
        return self.preparing(changes).done()

    def write(self, batch: Changes | Prepared, moves: dict[Position, tuple[int, int]]) -> None:
        """Apply one batch and move its positions, in one transaction; Conflict if raced."""
        ready = batch if isinstance(batch, Prepared) else self.prepare(batch)
        with self.engine.connect() as db:
            try:
                with db.begin():
                    self._write(db, ready, moves)
            except BaseException:
                bulk.forget_staging(db)  # a temporary table made in this transaction is gone
                raise

    def _write(
        self, db: Connection, batch: Prepared, moves: dict[Position, tuple[int, int]]
    ) -> None:
        changes = batch.changes
        if db.dialect.name == "postgresql":
            # Safe for exactly once: a commit lost in a server crash loses its positions too.
            db.execute(text("SET LOCAL synchronous_commit = off"))
            # A batch's rows are looked up by key in the big tables, never by scanning them:
            # without statistics of the staging tables the planner would hash whole tables.
            db.execute(text("SET LOCAL enable_hashjoin = off"))
            db.execute(text("SET LOCAL enable_mergejoin = off"))
        if moves:
            moved = db.execute(
                _MOVE,
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
        counts = counters.of_batch(changes)
        _Batch(db, self.insert, self.encoder, counts).apply(batch)
        self._count(db, counts)

    def _count(self, db: Connection, counts: Counter[CounterKey]) -> None:
        rows = [
            {"name": name, "labels": labels, "value": value}
            for (name, labels), value in sorted(counts.items())
            if value
        ]
        if not rows:
            return
        stmt = self.insert(schema.counters)
        db.execute(
            stmt.on_conflict_do_update(
                index_elements=["name", "labels"],
                set_={"value": schema.counters.c.value + stmt.excluded.value},
            ),
            rows,
        )


class _Batch:
    """The writes of one batch inside its transaction: a few statements whatever its size."""

    def __init__(
        self,
        db: Connection,
        insert: Any,
        encoder: bulk.Encoder | None,
        counts: Counter[CounterKey],
    ) -> None:
        self.db = db
        self.insert = insert
        self.encoder = encoder
        self.counts = counts

    def apply(self, batch: Prepared) -> None:
        changes = batch.changes
        rounds, fated = self._rounds(changes)
        fresh = self._bets(batch)
        self._adjustments(changes)
        self._players(changes, fresh)
        self._tables(changes)
        self._figures(changes, rounds, fated)

    def _figures(
        self,
        changes: Changes,
        rounds: dict[tuple[str, str], Round],
        fated: dict[tuple[str, str], list[int | str] | None],
    ) -> None:
        """Add the batch's figures to the report's tables."""
        games = {key: rnd.game for key, rnd in rounds.items() if rnd.game is not None}
        numbers = report.corrected_so_far(self.db, fated) if fated else {}
        outcomes = {key: outcome for key, outcome in fated.items() if outcome is not None}
        report.store(self.db, report.of_batch(changes, games, outcomes, numbers))

    def _rounds(
        self, changes: Changes
    ) -> tuple[dict[tuple[str, str], Round], dict[tuple[str, str], list[int | str] | None]]:
        """Apply the round events in order; every round a row names exists afterwards, and
        every round the batch touches moves to a new `version` (what a cached recall checks).
        The rounds, and the outcome before the batch of the rounds from before it that it
        corrects or voids (the report's corrections are told from them)."""
        keys = changes.rounds_named()
        known = self._load(sorted(keys))
        fresh = {key: Round(*key) for key in keys - known.keys()}
        rounds = {key: rnd for key, (rnd, _) in known.items()} | fresh
        fated: dict[tuple[str, str], list[int | str] | None] = {}
        for event_, _ in changes.round_events:
            key = (event_.table_id, event_.round_id)
            if isinstance(event_, RoundCorrected | RoundVoided) and key in known:
                before = known[key][0]
                outcome = before.dice or before.discs
                fated.setdefault(key, list(outcome) if outcome else None)
        for event_, _ in changes.round_events:
            rounds[(event_.table_id, event_.round_id)].apply(event_)
        steps: list[Row] = []
        new_rows: list[Row] = []
        old_rows: list[Row] = []
        for key, rnd in sorted(rounds.items()):
            count = known[key][1] if key in known else 0
            for n, step in enumerate(rnd.timeline, start=count + 1):
                steps.append({"table_id": key[0], "round_id": key[1], "n": n, "step": _step(step)})
            row = _round_row(rnd, count + len(rnd.timeline))
            if key in fresh:
                new_rows.append(row | {"version": 0})
            else:
                old_rows.append(row)
        if new_rows:
            bulk.load(self.db, schema.rounds, new_rows)
            self.counts[("croupier_read_rounds", "")] += len(new_rows)
        if old_rows:  # one statement, not one a round
            bulk.stage(self.db, bulk.STAGE_ROUNDS, [_in_order(row) for row in old_rows])
            self.db.execute(_ROUND_UPDATE)
        bulk.load(self.db, schema.steps, steps)
        return rounds, fated

    def _load(self, keys: list[tuple[str, str]]) -> dict[tuple[str, str], tuple[Round, int]]:
        """The rows of these rounds that exist: on PostgreSQL by two arrays of keys joined to
        the table (a long list of (table, round) pairs costs more to plan than to run)."""
        found: dict[tuple[str, str], tuple[Round, int]] = {}
        t = schema.rounds
        if self.db.dialect.name == "postgresql" and keys:
            tables, rounds = zip(*keys, strict=True)
            every = [self.db.execute(_ROUNDS_OF, {"t": list(tables), "r": list(rounds)}).all()]
        else:
            every = [  # SQLite: one writer at a time, the whole transaction
                self.db.execute(
                    select(t).where(tuple_(t.c.table_id, t.c.round_id).in_(list(chunk)))
                ).all()
                for chunk in bulk.chunks(keys)
            ]
        for rows in every:
            for row in rows:
                found[(row.table_id, row.round_id)] = (_round_of(row), row.steps)
        return found

    def _bets(self, batch: Prepared) -> Counter[str]:
        """Write the bets: the new rows (whole, or placed and pending) loaded straight into the
        table, the decisions of bets placed before merged into their rows in one statement;
        the new rows of each player."""
        fresh: Counter[str] = Counter()
        if self.db.dialect.name != "postgresql":  # SQLite merges them all
            every = [*batch.whole.rows, *batch.placed.rows, *batch.parts.rows]
            if every:
                self._merge(bulk.Encoded(every), fresh)
            return fresh
        merging = [batch.parts] if len(batch.parts) else []
        if len(batch.whole) and self._copied(batch.whole):
            fresh.update(map(_PLAYER_OF, batch.whole.rows))
        elif len(batch.whole):
            merging.append(batch.whole)
        placed = batch.placed
        there = self._there([_KEY_OF(row) for row in placed.rows])
        if there:  # decided in a batch before (its decision read first): merged into that row
            merging.append(bulk.Encoded([row for row in placed.rows if _KEY_OF(row) in there]))
            placed = bulk.encoded(
                self.encoder, [row for row in placed.rows if _KEY_OF(row) not in there]
            )
        if len(placed):  # none has a row: just looked up, and not among the whole ones
            bulk.copy_rows(self.db, schema.bets, placed)
            fresh.update(map(_PLAYER_OF, placed.rows))
            self.counts[("croupier_read_pending", "")] += len(placed)
        if len(merging) == 1:
            self._merge(merging[0], fresh)
        elif merging:
            rows = [row for part in merging for row in part.rows]
            self._merge(bulk.encoded(self.encoder, rows), fresh)
        return fresh

    def _there(self, keys: list[tuple[str, str, str]]) -> set[tuple[str, str, str]]:
        """Which of these bets (table, round, bet) have a row already (PostgreSQL)."""
        if not keys:
            return set()
        tables, rounds, bets = zip(*keys, strict=True)
        found = self.db.execute(_THERE, {"t": list(tables), "r": list(rounds), "b": list(bets)})
        return set(found.tuples())

    def _copied(self, rows: bulk.Encoded) -> bool:
        """COPY new rows into bets; False (nothing written) if one is there already (one id on
        two tables, say): they are merged."""
        try:
            with self.db.begin_nested():
                bulk.copy_rows(self.db, schema.bets, rows)
        except (IntegrityError, psycopg.errors.UniqueViolation):
            return False
        return True

    def _merge(self, rows: bulk.Encoded, fresh: Counter[str]) -> None:
        """Upsert rows (halves of bets) in one statement, counting the new rows of each player
        and how many of the rows it touched are pending (placed, not decided) after against
        before: exact whatever the rows repeat."""
        db = self.db
        bulk.stage(db, bulk.STAGE_BETS, rows)
        before: int = db.execute(_PENDING_TOUCHED).scalar_one()
        if db.dialect.name == "postgresql":
            # Told by the merge's own lookups and summed by player in the database: a row it
            # inserted has no xmax.
            after = 0
            for player_id, new, pending in db.execute(_merge_counts(db)):
                fresh[player_id] += new
                after += pending
        else:
            fresh.update(dict(db.execute(_NEW_BY_PLAYER).tuples().all()))
            db.execute(_merge_bets(db))
            after = db.execute(_PENDING_TOUCHED).scalar_one()
        self.counts[("croupier_read_pending", "")] += after - before

    def _adjustments(self, changes: Changes) -> None:
        """Insert the adjustments, each id once (a redelivered one changes nothing)."""
        rows = [changes.adjustments[key] for key in sorted(changes.adjustments)]
        if rows:
            stmt = self.insert(schema.adjustments).on_conflict_do_nothing(
                index_elements=["adjustment_id"]
            )
            self.db.execute(stmt, rows)

    def _players(self, changes: Changes, fresh: Counter[str]) -> None:
        """Every player named, with the count of its bets (a history's total, kept here)."""
        ids = changes.players_named()
        ids.update(fresh)
        if not ids:
            return
        bulk.stage(self.db, bulk.STAGE_PLAYERS, [(p, fresh[p]) for p in sorted(ids)])
        if self.db.dialect.name == "postgresql":
            # Told by the upsert itself: a player a projector beside this one inserts meanwhile
            # is waited for and counted by that one only.
            added = sum(self.db.execute(_merge_players(self.db).returning(_INSERTED)).scalars())
        else:
            added = self.db.execute(_NEW_PLAYERS).scalar_one()
            self.db.execute(_merge_players(self.db))
        self.counts[("croupier_read_players", "")] += added

    def _tables(self, changes: Changes) -> None:
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


_MOVE: Final = update(schema.positions).where(
    schema.positions.c.topic == bindparam("k_topic"),
    schema.positions.c.partition == bindparam("k_partition"),
    schema.positions.c.next_offset == bindparam("old"),
)
"""Move a partition's position from where the batch started (executed for every partition)."""
_PLAYER_OF: Final = attrgetter("player_id")
_KEY_OF: Final = attrgetter("table_id", "round_id", "bet_id")
"""A bet row's key (the primary key of `bets`)."""
_THERE: Final = text(
    "SELECT b.table_id, b.round_id, b.bet_id FROM unnest(CAST(:t AS text[]), CAST(:r AS text[]), "
    "CAST(:b AS text[])) AS k(table_id, round_id, bet_id) JOIN bets b ON b.table_id = k.table_id "
    "AND b.round_id = k.round_id AND b.bet_id = k.bet_id"
)
_SR = bulk.STAGE_ROUNDS
_ROUND_UPDATE: Final = (
    update(schema.rounds)
    .where(schema.rounds.c.table_id == _SR.c.table_id, schema.rounds.c.round_id == _SR.c.round_id)
    .values(
        {c.name: _SR.c[c.name] for c in _SR.columns if c.name not in ("table_id", "round_id")}
        | {"version": schema.rounds.c.version + 1}
    )
)
"""The staged rounds into their rows, each to a new `version`."""
_ROUNDS_OF: Final = text(
    "SELECT r.* FROM unnest(CAST(:t AS text[]), CAST(:r AS text[])) AS k(table_id, round_id) "
    "JOIN rounds r ON r.table_id = k.table_id AND r.round_id = k.round_id "
    "ORDER BY r.table_id, r.round_id FOR UPDATE OF r"
)
"""The rows of these rounds, locked in key order until the commit: they are rewritten from
what is read, and a second projector sharing the partitions may touch one of them too."""


def _in_order(row: Row) -> tuple[Any, ...]:
    """A round's row as the staging table's columns."""
    return tuple(row[c.name] for c in _SR.columns)


_SB = bulk.STAGE_BETS
_B = schema.bets
_SAME_BET: Final = and_(
    _B.c.table_id == _SB.c.table_id, _B.c.round_id == _SB.c.round_id, _B.c.bet_id == _SB.c.bet_id
)
"""A staged bet's row in `bets`: the same key."""
_TOUCHED: Final = _SB.join(_B, _SAME_BET)
_PENDING_TOUCHED: Final = (
    select(func.count())
    .select_from(_TOUCHED)
    .where(_B.c.placed_at.is_not(None), _B.c.decided_at.is_(None))
)
"""How many rows of the staged bets are pending (placed, not decided) now."""
_NEW_BY_PLAYER: Final = (
    select(_SB.c.player_id, func.count())
    .select_from(_SB.outerjoin(_B, _SAME_BET))
    .where(_B.c.bet_id.is_(None))
    .group_by(_SB.c.player_id)
)
"""The staged bets without a row yet, by player (SQLite; PostgreSQL's merge tells it)."""
_INSERTED: Final = literal_column("xmax = 0", Boolean)
"""In PostgreSQL's RETURNING of an upsert: the row was inserted, not updated."""
_SP = bulk.STAGE_PLAYERS
_NEW_PLAYERS: Final = (
    select(func.count())
    .select_from(_SP.outerjoin(schema.players, schema.players.c.player_id == _SP.c.player_id))
    .where(schema.players.c.player_id.is_(None))
)


def _merge_bets(db: Connection) -> Any:
    """Stage into bets: a placement sets the PLACED columns, a decision the DECIDED ones."""
    b = schema.bets
    stmt = bulk.insert_of(db)(b).from_select(
        list(BET_COLUMNS), select(*(_SB.c[n] for n in BET_COLUMNS)).where(true())
    )
    placed = stmt.excluded.placed_at.is_not(None)
    decided = stmt.excluded.decided_at.is_not(None)
    return stmt.on_conflict_do_update(
        index_elements=["table_id", "round_id", "bet_id"],
        set_={c: case((placed, stmt.excluded[c]), else_=b.c[c]) for c in PLACED}
        | {c: case((decided, stmt.excluded[c]), else_=b.c[c]) for c in DECIDED},
    )


def _merge_counts(db: Connection) -> Any:
    """PostgreSQL: the merge of the staged bets, and by player the rows it inserted and the rows
    it left pending."""
    b = schema.bets
    merged_rows = (
        _merge_bets(db)
        .returning(
            b.c.player_id.label("player_id"),
            _INSERTED.label("new"),
            (b.c.placed_at.is_not(None) & b.c.decided_at.is_(None)).label("pending"),
        )
        .cte("merged")
    )
    return select(
        merged_rows.c.player_id,
        func.count().filter(merged_rows.c.new),
        func.count().filter(merged_rows.c.pending),
    ).group_by(merged_rows.c.player_id)


def _merge_players(db: Connection) -> Any:
    p = schema.players
    stmt = bulk.insert_of(db)(p).from_select(
        ["player_id", "bets"], select(_SP.c.player_id, _SP.c.bets).where(true())
    )
    return stmt.on_conflict_do_update(
        index_elements=["player_id"], set_={"bets": p.c.bets + stmt.excluded.bets}
    )


def _step(step: Any) -> str:
    return msgspec.json.encode(step).decode()


def _round_row(rnd: Round, steps: int) -> Row:
    return {
        "table_id": rnd.table_id,
        "round_id": rnd.round_id,
        "game": rnd.game,
        "phase": rnd.phase,
        "suspensions": rnd.suspensions,
        "reshakes": rnd.reshakes,
        "last_seq": rnd.last_seq,
        "dice": json_text(rnd.dice and list(rnd.dice)),
        "discs": json_text(rnd.discs and list(rnd.discs)),
        "cancel_reason": rnd.cancel_reason,
        "steps": steps,
    }


_DICE: Final = msgspec.json.Decoder(tuple[int, int, int] | None)
_DISCS: Final = msgspec.json.Decoder(tuple[str, str, str, str] | None)


def _round_of(row: Any) -> Round:
    rnd = Round(row.table_id, row.round_id)
    rnd.game = row.game
    rnd.phase = row.phase
    rnd.suspensions = row.suspensions
    rnd.reshakes = row.reshakes
    rnd.last_seq = row.last_seq
    rnd.dice = _DICE.decode(row.dice) if row.dice else None
    rnd.discs = _DISCS.decode(row.discs) if row.discs else None  # type: ignore[assignment]
    rnd.cancel_reason = row.cancel_reason
    return rnd
