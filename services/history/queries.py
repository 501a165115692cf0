"""The read side's database, read by the API: a few indexed queries per request (a thin shell)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any, Final

import msgspec
from sqlalchemy import (
    BigInteger,
    Connection,
    Dialect,
    Engine,
    Integer,
    Select,
    bindparam,
    func,
    select,
    tuple_,
)

from services.history import answers, integrity, schema
from services.history.answers import decoded
from services.history.models import AdjustmentOut, BetsPage, DistributionOut, RoundOut, TableOut
from services.history.paging import encode_cursor
from services.history.schema import BET_COLUMNS, BetRow
from services.history.store.dialects import dialect_of
from services.history.store.report_figures import Figures
from services.history.views import Key
from services.reports.days import UTC_DAYS, Period
from services.reports.figures import Report
from services.statistics.integrity import WINDOW, Finding, ScopeKind

_B = schema.bets
_R = schema.rounds
_A = schema.adjustments
_ADJ = [_A.c[name] for name in answers.ADJUSTMENT_COLUMNS]
_BET = [_B.c[name] for name in BET_COLUMNS]
_ROUND = [_R.c.phase, _R.c.game, _R.c.dice, _R.c.discs]
_ENCODE: Final = msgspec.json.encode
RECALL_CACHE_BYTES: Final = 64 * 1024 * 1024
"""The recalls a process keeps in memory, in bytes of JSON."""
_ORDER = (_B.c.sort_micros, _B.c.table_id, _B.c.round_id, _B.c.seq, _B.c.bet_id)


class _Statement:
    """A query with named parameters, compiled once for a dialect and run on the driver's own
    cursor, its rows plain tuples: a history page spent more in building, compiling and
    wrapping its statement with SQLAlchemy (3.3 ms) than in running it (1.4 ms), and the rows
    of a big round's recall as SQLAlchemy Row objects cost more than the query itself (measured).
    The values must be the driver's own (no type of the query processes them)."""

    def __init__(self, query: Select[Any], dialect: Dialect) -> None:
        compiled = query.compile(dialect=dialect)
        self.sql = str(compiled)
        self.defaults = dict(compiled.construct_params(_check=False))
        self.order = compiled.positiontup

    def rows(self, db: Connection, **values: Any) -> list[tuple[Any, ...]]:
        params = self.defaults | values
        cursor = db.connection.dbapi_connection.cursor()  # type: ignore[union-attr]
        try:
            if self.order is not None:
                cursor.execute(self.sql, [params[name] for name in self.order])
            else:
                cursor.execute(self.sql, params)
            return [tuple(row) for row in cursor.fetchall()]
        finally:
            cursor.close()


_PLAYER_TOTAL: Final = select(schema.players.c.bets).where(
    schema.players.c.player_id == bindparam("player", type_=schema.Id)
)
"""A player's count of bets (`players.bets`), a history's total."""


def _history_query(shape: str) -> Select[Any]:
    """A history page newest first, its player's total and whether each bet has adjustments
    beside each row: from the first bet (`first`), past `offset` bets, or after a cursor's key
    (`after`: k0 ... k4)."""
    player = bindparam("player", type_=schema.Id)
    total_of = _PLAYER_TOTAL.scalar_subquery()
    adjusted_flag = select(_A.c.bet_id).where(_A.c.bet_id == _B.c.bet_id).exists()
    query = (
        select(*_BET, *_ROUND, total_of, adjusted_flag)
        .select_from(
            _B.outerjoin(_R, (_R.c.table_id == _B.c.table_id) & (_R.c.round_id == _B.c.round_id))
        )
        .where(_B.c.player_id == player)
        .order_by(*(column.desc() for column in _ORDER))
        .limit(bindparam("limit", type_=Integer))
    )
    match shape:
        case "after":
            key = [bindparam(f"k{n}", type_=column.type) for n, column in enumerate(_ORDER)]
            # The bound on the leading key is implied, and lets SQLite seek the index too.
            return query.where(_B.c.sort_micros <= key[0], tuple_(*_ORDER) < tuple_(*key))
        case "offset":
            return query.offset(bindparam("offset", type_=BigInteger))
        case _:
            return query


_HISTORY_SHAPES: Final = ("first", "offset", "after")


class Reads:
    """What the API asks of the database."""

    def __init__(self, engine: Engine, *, recall_cache_bytes: int = RECALL_CACHE_BYTES) -> None:
        # Each statement reads the database as it is when it runs, as it did inside a READ
        # COMMITTED transaction (PostgreSQL) or outside any (SQLite's reads); without one, a
        # request spares the BEGIN and the ROLLBACK, two round trips of its three or four.
        self.engine = engine.execution_options(isolation_level="AUTOCOMMIT")
        # A report reads its three tables as one state (`Dialect.snapshot`).
        self.dialect = dialect_of(engine)
        self.snapshot = self.dialect.snapshot(engine)
        self.recalls = Recalls(recall_cache_bytes)
        dialect = engine.dialect
        self.paging = {
            shape: _Statement(_history_query(shape), dialect) for shape in _HISTORY_SHAPES
        }
        self.round_bets = _Statement(_ROUND_BETS, dialect)
        self._verdicts: tuple[tuple[tuple[tuple[str, int], int], ...], list[Finding]] | None = None
        self.charts = integrity.Charts(self.engine, self.positions)

    def history(
        self, player_id: str, *, limit: int, offset: int = 0, after: Key | None = None
    ) -> BetsPage | None:
        """A page of a player's bets, newest first; None for a player never seen.

        One statement in the common case: the page, with the player's total and whether each
        bet has adjustments beside each row; the adjustments are read only for a page that
        shows an adjusted bet, and the total alone only for a page past the last bet."""
        values: dict[str, Any] = {"player": player_id, "limit": limit + 1}
        if after is not None:
            shape = "after"
            values |= {f"k{n}": key for n, key in enumerate(after)}
        elif offset:
            shape, values["offset"] = "offset", offset
        else:
            shape = "first"
        n = len(BET_COLUMNS)
        with self.engine.connect() as db:
            rows = self.paging[shape].rows(db, **values)
            shown = rows[:limit]
            total = (
                rows[0][n + 4]
                if rows
                else db.execute(_PLAYER_TOTAL, {"player": player_id}).scalar_one_or_none()
            )
            if not total:
                return None
            flagged = [row[0] for row in shown if row[n + 5]]
            adjusted = (
                _by_bet(
                    db.execute(
                        select(*_ADJ).where(_A.c.bet_id.in_(flagged)).order_by(_A.c.bet_id, _A.c.n)
                    ).all()
                )
                if flagged
                else {}
            )
        more = len(rows) > limit and bool(shown)
        cursor = None
        if more:
            last = BetRow(*shown[-1][:n])
            key = (last.sort_micros, last.table_id, last.round_id, last.seq or 0, last.bet_id)
            cursor = encode_cursor(key)
        return BetsPage(
            player_id,
            total,
            [
                answers.bet(
                    BetRow(*row[:n]),
                    row[n],
                    row[n + 1],
                    decoded(row[n + 2]),
                    decoded(row[n + 3]),
                    adjustments=adjusted.get(row[0], ()),
                )
                for row in shown
            ],
            cursor,
        )

    def recall(self, table_id: str, round_id: str) -> RoundOut | None:
        """A round's recall; None for a round nothing named."""
        with self.engine.connect() as db:
            rnd = db.execute(_round(table_id, round_id)).first()
            return None if rnd is None else _recall(db, self.round_bets, rnd[:-1])

    def recall_json(self, table_id: str, round_id: str) -> bytes | None:
        """`recall` as JSON: kept for as long as the round's version has not moved (the
        projector moves it in every batch that touches the round), so a big round that
        stopped changing is read from the database once, then answered from memory."""
        key = (table_id, round_id)
        with self.engine.connect() as db:
            rnd = db.execute(_round(table_id, round_id)).first()
            if rnd is None:
                return None
            version = rnd[-1]
            body = self.recalls.get(key, version)
            if body is not None:
                return body
            # The version was read before the rest: an answer newer than it is only ever
            # kept under a version that has already moved on.
            body = _ENCODE(_recall(db, self.round_bets, rnd[:-1]))
        self.recalls.put(key, version, body)
        return body

    def report(self, table_id: str | None = None, period: Period = UTC_DAYS) -> Report:
        """The regulator's report over the database (every table, or one): the figures the
        projector keeps of the period's quarter hours, read in one snapshot (to be rendered
        over the period: `services.reports.render`)."""
        with self.snapshot.connect() as db, db.begin():
            return Figures(db, self.dialect).get(table_id, period)

    def integrity(
        self, window: int = WINDOW, scope: ScopeKind | None = None, game: str | None = None
    ) -> list[Finding]:
        """The outcome integrity tests of `croupier integrity --json`, over the database."""
        with self.engine.connect() as db:
            return integrity.findings(db, window=window, scope=scope, game=game)

    def verdicts(self) -> list[Finding]:
        """`integrity()` for /metrics: tested again only once a batch has been projected since
        (the projector's positions moved), so a scrape of an idle read side reads one row a
        partition."""
        moved = tuple(sorted(self.positions().items()))
        kept = self._verdicts
        if kept is not None and kept[0] == moved:
            return kept[1]
        found = self.integrity()
        self._verdicts = (moved, found)
        return found

    def distribution(self, table_id: str) -> DistributionOut | None:
        """What the table's board charts; None before its first counted round."""
        return self.charts.get(table_id)

    def stats(self, table_id: str) -> str | None:
        """The table's last `table_stats` record, verbatim; None before its first result."""
        t = schema.tables
        with self.engine.connect() as db:
            found: str | None = db.execute(
                select(t.c.stats).where(t.c.table_id == table_id)
            ).scalar_one_or_none()
        return found

    def tables(self) -> list[TableOut]:
        """Every table, in table_id order."""
        t = schema.tables
        with self.engine.connect() as db:
            rows = db.execute(select(t.c.table_id, t.c.game, t.c.stats).order_by(t.c.table_id))
            return [answers.table(*row) for row in rows]

    def counters(self) -> dict[tuple[str, str], int]:
        c = schema.counters
        with self.engine.connect() as db:
            return {(r.name, r.labels): r.value for r in db.execute(select(c))}

    def pending(self) -> int:
        """Confirmed bets with no committed decision: bets placed less bets decided (exact once
        caught up; a decision projected before its bet.placed is not subtracted twice)."""
        counters = self.counters()
        return pending_of(counters)

    def boards(self) -> int:
        t = schema.tables
        with self.engine.connect() as db:
            count: int = db.execute(
                select(func.count()).select_from(t).where(t.c.stats.is_not(None))
            ).scalar_one()
        return count

    def positions(self) -> dict[tuple[str, int], int]:
        p = schema.positions
        with self.engine.connect() as db:
            return {(r.topic, r.partition): r.next_offset for r in db.execute(select(p))}


_ROUND_BETS: Final = (
    select(*_BET)
    .where(
        _B.c.table_id == bindparam("table", type_=schema.Id),
        _B.c.round_id == bindparam("round", type_=schema.Id),
    )
    .order_by(_B.c.seq, _B.c.bet_id)
)
"""A round's bets in (seq, bet_id) order."""


def _round(table_id: str, round_id: str) -> Select[Any]:
    return select(
        _R.c.table_id,
        _R.c.round_id,
        _R.c.game,
        _R.c.phase,
        _R.c.suspensions,
        _R.c.reshakes,
        _R.c.last_seq,
        _R.c.dice,
        _R.c.discs,
        _R.c.cancel_reason,
        _R.c.version,
    ).where(_R.c.table_id == table_id, _R.c.round_id == round_id)


def _recall(db: Connection, round_bets: _Statement, rnd: Sequence[Any]) -> RoundOut:
    """The recall of a round, from its row (table_id, round_id, ... cancel_reason)."""
    table_id, round_id = rnd[0], rnd[1]
    s = schema.steps
    steps = (
        db.execute(
            select(s.c.step)
            .where(s.c.table_id == table_id, s.c.round_id == round_id)
            .order_by(s.c.n)
        )
        .scalars()
        .all()
    )
    rows = [BetRow(*row) for row in round_bets.rows(db, table=table_id, round=round_id)]
    adjusted = _by_bet(
        db.execute(
            select(*_ADJ)
            .where(_A.c.table_id == table_id, _A.c.round_id == round_id)
            .order_by(_A.c.bet_id, _A.c.n)
        ).all()
    )
    return answers.recall(rnd, steps, rows, adjusted)


class Recalls:
    """Recalls as JSON by round and version, the least recently used dropped past a budget."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.size = 0
        self.kept: OrderedDict[tuple[str, str], tuple[int, bytes]] = OrderedDict()
        self.lock = threading.Lock()

    def get(self, key: tuple[str, str], version: int) -> bytes | None:
        with self.lock:
            found = self.kept.get(key)
            if found is None or found[0] != version:
                return None
            self.kept.move_to_end(key)
            return found[1]

    def put(self, key: tuple[str, str], version: int, body: bytes) -> None:
        if len(body) > self.budget // 4:
            return
        with self.lock:
            old = self.kept.pop(key, None)
            if old is not None:
                self.size -= len(old[1])
            self.kept[key] = (version, body)
            self.size += len(body)
            while self.size > self.budget:
                _, (_, dropped) = self.kept.popitem(last=False)
                self.size -= len(dropped)


def _by_bet(rows: Any) -> dict[str, list[AdjustmentOut]]:
    """Adjustment rows (bet_id first, in bet then n order) as answers, grouped by bet."""
    grouped: dict[str, list[AdjustmentOut]] = {}
    for row in rows:
        grouped.setdefault(row[0], []).append(answers.adjustment(row))
    return grouped


def pending_of(counters: dict[tuple[str, str], int]) -> int:
    """Bets whose bet.placed and no decision were projected."""
    return counters.get(("croupier_read_pending", ""), 0)


def health_counts(reads: Reads) -> tuple[int, int, int, int]:
    """The counts `/health` shows beside the lag: pending bets, players, rounds, tables."""
    counters = reads.counters()
    return (
        pending_of(counters),
        counters.get(("croupier_read_players", ""), 0),
        counters.get(("croupier_read_rounds", ""), 0),
        reads.boards(),
    )
