"""The read side's database, written by the projector: one transaction per batch, with positions.

One code path for PostgreSQL (psycopg 3) and SQLite (sqlite3): SQLAlchemy Core, and the dialect's
`INSERT ... ON CONFLICT`, which both spell alike. A batch's rows, its counters and the Kafka
positions it consumed commit together or not at all; the positions move only from the values this
projector read, so a second projector on the same database can never apply a batch twice.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Final

import msgspec
from sqlalchemy import (
    Boolean,
    Connection,
    Engine,
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

from services.history import bulk, schema
from services.history.projection import (
    BET_COLUMNS,
    DECIDED,
    PLACED,
    Changes,
    CounterKey,
    Row,
    json_text,
    merged,
)
from services.history.views import Round

log = logging.getLogger("croupier.store")
DEFAULT_SQLITE: Final = ".data/readside.sqlite"
_CHUNK: Final = 400
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


def _chunks(items: Sequence[Any], size: int = _CHUNK) -> Iterator[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


class Store:
    """Positions, bets, rounds, tables and counters of the read side."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.insert = _insert(engine)

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

    def write(self, changes: Changes, moves: dict[Position, tuple[int, int]]) -> None:
        """Apply one batch and move its positions, in one transaction; Conflict if raced."""
        with self.engine.connect() as db:
            try:
                with db.begin():
                    self._write(db, changes, moves)
            except BaseException:
                bulk.forget_staging(db)  # a temporary table made in this transaction is gone
                raise

    def _write(
        self, db: Connection, changes: Changes, moves: dict[Position, tuple[int, int]]
    ) -> None:
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
        counts = Counter(changes.counts)
        _Batch(db, self.insert, counts).apply(changes)
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

    def __init__(self, db: Connection, insert: Any, counts: Counter[CounterKey]) -> None:
        self.db = db
        self.insert = insert
        self.counts = counts

    def apply(self, changes: Changes) -> None:
        self._rounds(changes)
        fresh = self._bets(changes)
        self._adjustments(changes)
        self._players(changes, fresh)
        self._tables(changes)

    def _rounds(self, changes: Changes) -> None:
        """Apply the round events in order; every round a row names exists afterwards, and
        every round the batch touches moves to a new `version` (what a cached recall checks)."""
        keys = {(e.table_id, e.round_id) for e, _ in changes.round_events}
        for rows in (changes.placements.values(), changes.decisions.values()):
            keys.update((row[2], row[3]) for row in rows)
        keys |= {(r["table_id"], r["round_id"]) for r in changes.adjustments.values()}
        known = self._load(sorted(keys))
        fresh = {key: Round(*key) for key in keys - known.keys()}
        rounds = {key: rnd for key, (rnd, _) in known.items()} | fresh
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
                old_rows.append({f"k_{k}" if k in _ROUND_KEY else k: v for k, v in row.items()})
        if new_rows:
            bulk.load(self.db, schema.rounds, new_rows)
            self.counts[("croupier_read_rounds", "")] += len(new_rows)
        if old_rows:
            self.db.execute(_ROUND_UPDATE, old_rows)
        bulk.load(self.db, schema.steps, steps)

    def _load(self, keys: list[tuple[str, str]]) -> dict[tuple[str, str], tuple[Round, int]]:
        found: dict[tuple[str, str], tuple[Round, int]] = {}
        t = schema.rounds
        for chunk in _chunks(keys):
            rows = self.db.execute(
                select(t).where(tuple_(t.c.table_id, t.c.round_id).in_(list(chunk)))
            ).all()
            for row in rows:
                found[(row.table_id, row.round_id)] = (_round_of(row), row.steps)
        return found

    def _bets(self, changes: Changes) -> Counter[str]:
        """Upsert the bets in one statement (a bet read with its decision in one batch is one
        row written); the new rows of each player."""
        placements, decisions = changes.placements, changes.decisions
        rows = [
            merged(placed, decisions[bet_id]) if bet_id in decisions else placed
            for bet_id, placed in placements.items()
        ]
        rows += [row for bet_id, row in decisions.items() if bet_id not in placements]
        fresh: Counter[str] = Counter()
        if not rows:
            return fresh
        bulk.stage(self.db, bulk.STAGE_BETS, rows)
        pending = 0
        if self.db.dialect.name == "postgresql":
            # What the merge did, told by its own lookups rather than a second one: a row it
            # inserted has no xmax, and a decision ends a pending bet when the row it updated
            # kept a placement.
            b = schema.bets
            merge = _merge_bets(self.db).returning(
                b.c.bet_id, b.c.player_id, _INSERTED, b.c.placed_at.is_not(None)
            )
            for bet_id, player_id, new, has_placed in self.db.execute(merge):
                placed, decided = bet_id in placements, bet_id in decisions
                if new:
                    fresh[player_id] += 1
                    if placed and not decided:
                        pending += 1
                elif decided and not placed and has_placed:
                    pending -= 1
        else:
            for player_id, placed, decided, new, had_placed, n in self.db.execute(_CLASSIFY):
                if new:
                    fresh[player_id] += n
                    if placed and not decided:
                        pending += n
                elif decided and not placed and had_placed:
                    pending -= n
            self.db.execute(_merge_bets(self.db))
        self.counts[("croupier_read_pending", "")] += pending
        return fresh

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
        ids = set(fresh)
        for rows in (changes.placements.values(), changes.decisions.values()):
            ids.update(row[1] for row in rows)
        ids |= {r["player_id"] for r in changes.adjustments.values()}
        if not ids:
            return
        bulk.stage(self.db, bulk.STAGE_PLAYERS, [(p, fresh[p]) for p in sorted(ids)])
        added: int = self.db.execute(_NEW_PLAYERS).scalar_one()
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
_ROUND_KEY: Final = ("table_id", "round_id")
_ROUND_UPDATE: Final = (
    update(schema.rounds)
    .where(
        schema.rounds.c.table_id == bindparam("k_table_id"),
        schema.rounds.c.round_id == bindparam("k_round_id"),
    )
    .values(version=schema.rounds.c.version + 1)
)
_SB = bulk.STAGE_BETS
_CLASSES: Final = (
    _SB.c.player_id,
    _SB.c.placed_at.is_not(None),
    _SB.c.decided_at.is_not(None),
    schema.bets.c.bet_id.is_(None),
    schema.bets.c.placed_at.is_not(None),
)
_CLASSIFY: Final = (
    select(*_CLASSES, func.count())
    .select_from(_SB.outerjoin(schema.bets, schema.bets.c.bet_id == _SB.c.bet_id))
    .group_by(*_CLASSES)
)
"""A batch's bets by player, whether the batch has their placement and their decision, whether
their row is new and whether it had its placement (SQLite; PostgreSQL's merge tells it)."""
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
        index_elements=["bet_id"],
        set_={c: case((placed, stmt.excluded[c]), else_=b.c[c]) for c in PLACED}
        | {c: case((decided, stmt.excluded[c]), else_=b.c[c]) for c in DECIDED},
    )


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
