"""The read side's database, written by the projector: one transaction per batch, with positions.

One code path for PostgreSQL (psycopg 3) and SQLite (sqlite3): SQLAlchemy Core, and the dialect's
`INSERT ... ON CONFLICT`, which both spell alike. A batch's rows, its counters and the Kafka
positions it consumed commit together or not at all; the positions move only from the values this
projector read, so a second projector on the same database can never apply a batch twice.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, Final

import msgspec
from sqlalchemy import Connection, Engine, create_engine, event, select, text, tuple_, update
from sqlalchemy.dialects import postgresql, sqlite

from services.history import bulk, schema
from services.history.projection import DECIDED, PLACED, Changes, CounterKey, Row, json_text
from services.history.tally import LATENCY_BUCKETS_MS
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
        with self.engine.begin() as db:
            if db.dialect.name == "postgresql":
                # Safe for exactly once: a commit lost in a server crash loses its positions too.
                db.execute(text("SET LOCAL synchronous_commit = off"))
            for (topic, p), (old, new) in sorted(moves.items()):
                moved = db.execute(
                    update(schema.positions)
                    .where(
                        schema.positions.c.topic == topic,
                        schema.positions.c.partition == p,
                        schema.positions.c.next_offset == old,
                    )
                    .values(next_offset=new)
                )
                if moved.rowcount != 1:
                    raise Conflict(f"{topic}[{p}] is no longer at {old}: another projector ran")
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
    """The writes of one batch inside its transaction."""

    def __init__(self, db: Connection, insert: Any, counts: Counter[CounterKey]) -> None:
        self.db = db
        self.insert = insert
        self.counts = counts

    def apply(self, changes: Changes) -> None:
        fates = self._rounds(changes)
        self._observe(changes, fates)
        self._bets(changes)
        self._adjustments(changes)
        self._players(changes)
        self._tables(changes)

    def _rounds(self, changes: Changes) -> dict[tuple[str, str], int | None]:
        """Apply the round events in order; every round a row names exists afterwards.

        Returns each touched round's fate timestamp (None while it has no fate).
        """
        keys = {(e.table_id, e.round_id) for e, _ in changes.round_events}
        keys |= {(r["table_id"], r["round_id"]) for r in changes.placements.values()}
        keys |= {(r["table_id"], r["round_id"]) for r in changes.decisions.values()}
        keys |= {(r["table_id"], r["round_id"]) for r in changes.adjustments.values()}
        known = self._load(sorted(keys))
        loaded = {key: rnd.phase for key, (rnd, _, _) in known.items()}
        fresh: dict[tuple[str, str], tuple[Round, int, int | None]] = {}
        for key in keys - known.keys():
            fresh[key] = known[key] = (Round(*key), 0, None)
        newly_fated: list[tuple[str, str]] = []
        for event_, timestamp_ms in changes.round_events:
            key = (event_.table_id, event_.round_id)
            rnd, _, fate_ts = known[key]
            final = rnd.phase in ("result", "cancelled", "voided")
            rnd.apply(event_)
            if not final and rnd.phase in ("result", "cancelled", "voided"):
                known[key] = (rnd, known[key][1], timestamp_ms)
                newly_fated.append(key)
        self._unobserved(newly_fated, {key: known[key][2] for key in newly_fated})
        steps: list[Row] = []
        changed: list[Row] = []
        for key, (rnd, count, fate_ts) in known.items():
            for n, step in enumerate(rnd.timeline, start=count + 1):
                steps.append({"table_id": key[0], "round_id": key[1], "n": n, "step": _step(step)})
            row = _round_row(rnd, count + len(rnd.timeline), fate_ts)
            if key in fresh or rnd.timeline or loaded[key] != rnd.phase:
                changed.append(row)
        new_rows = [row for row in changed if (row["table_id"], row["round_id"]) in fresh]
        old_rows = [row for row in changed if (row["table_id"], row["round_id"]) not in fresh]
        if new_rows:
            bulk.load(self.db, schema.rounds, new_rows)
            self.counts[("croupier_read_rounds", "")] += len(new_rows)
        for row in old_rows:
            self.db.execute(
                update(schema.rounds)
                .where(
                    schema.rounds.c.table_id == row["table_id"],
                    schema.rounds.c.round_id == row["round_id"],
                )
                .values(**{k: v for k, v in row.items() if k not in ("table_id", "round_id")})
            )
        bulk.load(self.db, schema.steps, steps)
        return {key: fate_ts for key, (_, _, fate_ts) in known.items()}

    def _load(
        self, keys: list[tuple[str, str]]
    ) -> dict[tuple[str, str], tuple[Round, int, int | None]]:
        found: dict[tuple[str, str], tuple[Round, int, int | None]] = {}
        t = schema.rounds
        for chunk in _chunks(keys):
            rows = self.db.execute(
                select(t).where(tuple_(t.c.table_id, t.c.round_id).in_(list(chunk)))
            ).all()
            for row in rows:
                found[(row.table_id, row.round_id)] = (_round_of(row), row.steps, row.fate_ts)
        return found

    def _unobserved(
        self, keys: list[tuple[str, str]], fates: dict[tuple[str, str], int | None]
    ) -> None:
        """Decisions projected before their round's fate: observed now that the fate is in."""
        b = schema.bets
        for key in keys:
            fate_ts = fates[key]
            assert fate_ts is not None
            decided = self.db.execute(
                select(b.c.decided_ts).where(
                    b.c.table_id == key[0], b.c.round_id == key[1], b.c.decided_ts.is_not(None)
                )
            ).scalars()
            self._latency(timestamp - fate_ts for timestamp in decided)

    def _observe(self, changes: Changes, fates: dict[tuple[str, str], int | None]) -> None:
        self._latency(
            row["decided_ts"] - fate_ts
            for row in changes.decisions.values()
            if (fate_ts := fates.get((row["table_id"], row["round_id"]))) is not None
        )

    def _latency(self, observations: Iterable[int]) -> None:
        name = "croupier_read_decision_latency_seconds"
        for ms in observations:
            ms = max(0, ms)
            bound = next((b for b in LATENCY_BUCKETS_MS if ms <= b), None)
            label = "+Inf" if bound is None else str(bound)
            self.counts[(f"{name}_bucket", label)] += 1
            self.counts[(f"{name}_sum", "")] += ms
            self.counts[(f"{name}_count", "")] += 1

    def _bets(self, changes: Changes) -> None:
        """Upsert the bets: a bet read with its decision in one batch is one row written."""
        placements, decisions = changes.placements, changes.decisions
        both = placements.keys() & decisions.keys()
        whole = [_merged(placements[bet_id], decisions[bet_id]) for bet_id in sorted(both)]
        only_placed = [row for bet_id, row in placements.items() if bet_id not in both]
        only_decided = [row for bet_id, row in decisions.items() if bet_id not in both]
        if not (whole or only_placed or only_decided):
            return
        bulk.stage(self.db, bulk.STAGE_BETS, (whole, only_placed, only_decided))
        decided_first = bulk.matched(self.db, bulk.STAGE_BETS, schema.bets, 1, "bet_id")
        placed_first = bulk.matched(
            self.db, bulk.STAGE_BETS, schema.bets, 2, "bet_id", schema.bets.c.placed_at.is_not(None)
        )
        self.counts[("croupier_read_pending", "")] += len(only_placed) - decided_first
        self.counts[("croupier_read_pending", "")] -= placed_first
        for part, columns in enumerate((PLACED + DECIDED, PLACED, DECIDED)):
            bulk.merge(self.db, bulk.STAGE_BETS, schema.bets, part, "bet_id", columns)

    def _adjustments(self, changes: Changes) -> None:
        """Insert the adjustments, each id once (a redelivered one changes nothing)."""
        rows = [changes.adjustments[key] for key in sorted(changes.adjustments)]
        if rows:
            stmt = self.insert(schema.adjustments).on_conflict_do_nothing(
                index_elements=["adjustment_id"]
            )
            self.db.execute(stmt, rows)

    def _players(self, changes: Changes) -> None:
        ids = {r["player_id"] for r in changes.placements.values()}
        ids |= {r["player_id"] for r in changes.decisions.values()}
        ids |= {r["player_id"] for r in changes.adjustments.values()}
        if not ids:
            return
        bulk.stage(self.db, bulk.STAGE_PLAYERS, ([{"player_id": p} for p in sorted(ids)],))
        added = bulk.merge(self.db, bulk.STAGE_PLAYERS, schema.players, 0, "player_id", ())
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


def _merged(placed: Row, decision: Row) -> Row:
    return decision | {column: placed[column] for column in PLACED}


def _step(step: Any) -> str:
    return msgspec.json.encode(step).decode()


def _round_row(rnd: Round, steps: int, fate_ts: int | None) -> Row:
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
        "fate_ts": fate_ts,
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
