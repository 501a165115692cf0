"""The outcome integrity tests over the read side's database (a thin shell): each scope's last
`window` counted rounds read by one statement, tested by `services.statistics.integrity`, the
code of `croupier integrity`.

The statement numbers each counted round within its table's, its dealer's and its shaker's
rounds of its game, newest first in the contract's order (the result's instant, table_id,
round_id; ids compare by code point on both databases), and keeps the rounds that are within
the first `window` of any of their scopes. Each scope's window is among them, and only its
rounds are, so `evaluate` finds exactly the windows it finds in a replay of every round.

A board's chart reads one table's window alone (`table_distribution`), kept until the projector
moves (`Charts`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final, Literal

from msgspec.structs import asdict
from sqlalchemy import BigInteger, Connection, Engine, and_, bindparam, func, or_, select

from services.history import schema
from services.history.models import DistributionOut
from services.history.store.integrity import counted_of
from services.statistics.integrity import (
    DEFAULT,
    WINDOW,
    Finding,
    ScopeKind,
    Thresholds,
    charted,
    evaluate,
    windows,
)

_T: Final = schema.integrity_rounds
SCOPES: Final[tuple[ScopeKind, ...]] = ("table", "dealer", "shaker")
GameName = Literal["sicbo", "thai-hilo", "xocdia"]


def _rank(scope: ScopeKind) -> Any:
    column = {"table": _T.c.table_id, "dealer": _T.c.dealer_id, "shaker": _T.c.shaker_id}[scope]
    return (
        func.row_number()
        .over(
            partition_by=(_T.c.game, column),
            order_by=(_T.c.at.desc(), _T.c.table_id.desc(), _T.c.round_id.desc()),
        )
        .label(scope)
    )


_NUMBERED: Final = select(
    _T.c.table_id,
    _T.c.round_id,
    _T.c.game,
    _T.c.dealer_id,
    _T.c.shaker_id,
    _T.c.at,
    _T.c.outcome,
    *(_rank(scope) for scope in SCOPES),
).where(_T.c.outcome.is_not(None))


def _windows(scopes: tuple[ScopeKind, ...], game: str | None) -> Any:
    numbered = (_NUMBERED if game is None else _NUMBERED.where(_T.c.game == game)).subquery()
    named = {"table": numbered.c.table_id, "dealer": numbered.c.dealer_id}
    named["shaker"] = numbered.c.shaker_id
    within = bindparam("window", type_=BigInteger)
    return select(*(numbered.c[c.name] for c in _T.c)).where(
        or_(*(and_(named[scope].is_not(None), numbered.c[scope] <= within) for scope in scopes))
    )


def findings(
    db: Connection,
    *,
    window: int = WINDOW,
    scope: ScopeKind | None = None,
    game: str | None = None,
    thresholds: Thresholds = DEFAULT,
) -> list[Finding]:
    """Every test of every scope's window (one kind of scope, one game, when given), as
    `croupier integrity --json` lists them."""
    scopes = SCOPES if scope is None else (scope,)
    rows = db.execute(_windows(scopes, game), {"window": window}).tuples()
    found = evaluate(map(counted_of, rows), window, thresholds)
    return [f for f in found if f.scope in scopes]


_TABLE: Final = bindparam("table", type_=schema.Id)
_LATEST_GAME: Final = (
    select(_T.c.game)
    .where(_T.c.table_id == _TABLE, _T.c.outcome.is_not(None))
    .order_by(_T.c.at.desc(), _T.c.round_id.desc())
    .limit(1)
    .scalar_subquery()
)
_TABLE_WINDOW: Final = (
    select(*_T.c)
    .where(_T.c.table_id == _TABLE, _T.c.game == _LATEST_GAME, _T.c.outcome.is_not(None))
    .order_by(_T.c.at.desc(), _T.c.round_id.desc())
    .limit(bindparam("window", type_=BigInteger))
)
"""A table's last `window` counted rounds of the game of its newest one, newest first."""


def table_distribution(
    db: Connection, table_id: str, window: int = WINDOW
) -> DistributionOut | None:
    """What a table's board charts: the distribution of its game's first test over the table's
    window (its `table` scope's) of the game of its newest counted round; None before its first
    counted round."""
    rows = db.execute(_TABLE_WINDOW, {"table": table_id, "window": window}).tuples()
    rounds = list(map(counted_of, rows))
    if not rounds:
        return None
    game = rounds[0].game
    kept = windows(rounds, window)[("table", table_id, game)]
    found = charted(game, (rnd.outcome for rnd in kept))
    if found is None:
        return None
    return DistributionOut(
        table_id=table_id, game=game, window=window, rounds=len(kept), **asdict(found)
    )


Positions = dict[tuple[str, int], int]


class Charts:
    """Each table's chart (`table_distribution`), read again only once a batch has been projected
    since it was read (the projector's positions moved, one row a partition): the viewers of a
    board cost one read a batch, not one each."""

    SIZE: Final = 1024
    """Tables kept; past it the memo starts again empty."""

    def __init__(self, engine: Engine, positions: Callable[[], Positions]) -> None:
        self.engine = engine
        self.positions = positions
        self.kept: dict[str, tuple[Positions, DistributionOut | None]] = {}

    def get(self, table_id: str) -> DistributionOut | None:
        moved = self.positions()
        kept = self.kept.get(table_id)
        if kept is not None and kept[0] == moved:
            return kept[1]
        with self.engine.connect() as db:
            found = table_distribution(db, table_id)
        if len(self.kept) >= self.SIZE:
            self.kept.clear()
        self.kept[table_id] = (moved, found)
        return found
