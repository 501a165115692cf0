"""The SQL of a projector batch that both databases run alike (SQLAlchemy Core).

Most of it merges a staged copy (`bulk.STAGE_*`, a temporary table filled in bulk) into its table
with one `INSERT ... SELECT ... ON CONFLICT`: a few statements a batch, whatever its size. What
only one database runs is in its adapter (`dialects`, `postgres`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from sqlalchemy import Select, and_, bindparam, case, func, select, true, tuple_, update

from services.history import bulk, schema
from services.history.rows import Row
from services.history.schema import BET_COLUMNS, DECIDED, PLACED

MOVE: Final = update(schema.positions).where(
    schema.positions.c.topic == bindparam("k_topic"),
    schema.positions.c.partition == bindparam("k_partition"),
    schema.positions.c.next_offset == bindparam("old"),
)
"""Move a partition's position from where the batch started (executed for every partition)."""

_SR = bulk.STAGE_ROUNDS
ROUND_UPDATE: Final = (
    update(schema.rounds)
    .where(schema.rounds.c.table_id == _SR.c.table_id, schema.rounds.c.round_id == _SR.c.round_id)
    .values(
        {c.name: _SR.c[c.name] for c in _SR.columns if c.name not in ("table_id", "round_id")}
        | {"version": schema.rounds.c.version + 1}
    )
)
"""The staged rounds into their rows, each to a new `version`."""


def staged_round(row: Row) -> tuple[Any, ...]:
    """A round's row as the staging table's columns."""
    return tuple(row[c.name] for c in _SR.columns)


def rounds_in(keys: Sequence[tuple[str, str]]) -> Select[Any]:
    """The rows of `rounds` of these (table_id, round_id) keys (a list of them in IN (...))."""
    t = schema.rounds
    return select(t).where(tuple_(t.c.table_id, t.c.round_id).in_(list(keys)))


_SB = bulk.STAGE_BETS
_B = schema.bets
_SAME_BET: Final = and_(
    _B.c.table_id == _SB.c.table_id, _B.c.round_id == _SB.c.round_id, _B.c.bet_id == _SB.c.bet_id
)
"""A staged bet's row in `bets`: the same key."""
PENDING_TOUCHED: Final = (
    select(func.count())
    .select_from(_SB.join(_B, _SAME_BET))
    .where(_B.c.placed_at.is_not(None), _B.c.decided_at.is_(None))
)
"""How many rows of the staged bets are pending (placed, not decided) now."""
NEW_BY_PLAYER: Final = (
    select(_SB.c.player_id, func.count())
    .select_from(_SB.outerjoin(_B, _SAME_BET))
    .where(_B.c.bet_id.is_(None))
    .group_by(_SB.c.player_id)
)
"""The staged bets without a row yet, by player (SQLite; PostgreSQL's merge tells it)."""
_SP = bulk.STAGE_PLAYERS
NEW_PLAYERS: Final = (
    select(func.count())
    .select_from(_SP.outerjoin(schema.players, schema.players.c.player_id == _SP.c.player_id))
    .where(schema.players.c.player_id.is_(None))
)
"""The staged players without a row yet (SQLite; PostgreSQL's upsert tells it)."""


def merge_bets(insert: Any) -> Any:
    """Stage into bets: a placement sets the PLACED columns, a decision the DECIDED ones."""
    b = schema.bets
    stmt = insert(b).from_select(
        list(BET_COLUMNS), select(*(_SB.c[n] for n in BET_COLUMNS)).where(true())
    )
    placed = stmt.excluded.placed_at.is_not(None)
    decided = stmt.excluded.decided_at.is_not(None)
    return stmt.on_conflict_do_update(
        index_elements=["table_id", "round_id", "bet_id"],
        set_={c: case((placed, stmt.excluded[c]), else_=b.c[c]) for c in PLACED}
        | {c: case((decided, stmt.excluded[c]), else_=b.c[c]) for c in DECIDED},
    )


def merge_players(insert: Any) -> Any:
    """Stage into players: each staged player's new bets added to its count."""
    p = schema.players
    stmt = insert(p).from_select(
        ["player_id", "bets"], select(_SP.c.player_id, _SP.c.bets).where(true())
    )
    return stmt.on_conflict_do_update(
        index_elements=["player_id"], set_={"bets": p.c.bets + stmt.excluded.bets}
    )
