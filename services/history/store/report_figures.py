"""The regulator's report's figures in the read side's database (a repository of a batch): the
same figures as from a replay file.

Each batch's accepted round events, decisions and adjustments are fed to the one report core,
`services.reports.figures` (`of_batch`), and the figures it makes are added to the report's tables
in the batch's transaction (`Figures.add`), per quarter hour (UTC); `Figures.get` reads back those
of a period's quarters, which `services.reports.daily` adds up into its gaming days. So a report
from the database and one from `croupier report FILE` of the same events agree figure for
figure, and a report reads a few rows a table and quarter hour of its period, whatever the
history. `Figures.from_rows` feeds the core every stored row instead (the migrations that made
the tables and their quarters fill them with it).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from fractions import Fraction
from typing import Any, Final

import msgspec
from sqlalchemy import Connection, func, select, tuple_

from services.history import bulk, schema
from services.history.projection import Changes
from services.history.store.dialects import Dialect, dialect_of
from services.reports.days import UTC_DAYS, Period
from services.reports.figures import Correction, Money, Report, Rounds

_JSON: Final = msgspec.json.Decoder()
_STREAMED: Final = 10_000
"""Rows fetched at a time (a server-side cursor on PostgreSQL), so memory does not grow with
the history."""
_FATES: Final = frozenset({"round.result", "round.cancelled", "round.corrected", "round.voided"})


class Figures:
    """The rows of `report_money`, `report_rounds` and `report_corrections`."""

    def __init__(self, db: Connection, dialect: Dialect | None = None) -> None:
        self.db = db
        self.dialect = dialect or dialect_of(db)

    def add(self, more: Report) -> None:
        """Add these figures to the report's tables (in the caller's transaction)."""
        _store(self.db, self.dialect.insert, more)

    def corrected_so_far(self, keys: Iterable[tuple[str, str]]) -> dict[tuple[str, str], int]:
        """How many corrections and voids of each of these rounds the report holds."""
        return _corrected_so_far(self.db, keys)

    def get(self, table_id: str | None = None, period: Period = UTC_DAYS) -> Report:
        """The report over every table (or one), from the figures the projector keeps: those of
        the quarter hours of the period's gaming days (`Period.quarters`)."""
        return _build(self.db, table_id, period.quarters())

    def from_rows(self, table_id: str | None = None) -> Report:
        """The report over every table (or one), from every row the database holds."""
        return _from_rows(self.db, table_id)


def _from_rows(db: Connection, table_id: str | None = None) -> Report:
    report = Report()
    r, s, b, a = schema.rounds, schema.steps, schema.bets, schema.adjustments

    def only(table: Any, query: Any) -> Any:
        return query if table_id is None else query.where(table.c.table_id == table_id)

    for row in _rows(db, only(r, select(r.c.table_id, r.c.round_id, r.c.game))):
        if row.game is not None:
            report.opened(row.table_id, row.round_id, row.game)
    steps = only(s, select(s.c.table_id, s.c.round_id, s.c.step)).order_by(
        s.c.table_id, s.c.round_id, s.c.n
    )
    for row in _rows(db, steps):
        step = _JSON.decode(row.step)
        if step["type"] in _FATES:
            report.event(
                step["type"],
                row.table_id,
                row.round_id,
                step["at"],
                step.get("dice") or step.get("discs"),
                step.get("reason") or "",
                step.get("authorized_by") or "",
            )
    decided = only(
        b,
        select(
            b.c.table_id,
            b.c.round_id,
            b.c.decided_at,
            b.c.currency,
            b.c.stake,
            b.c.payout,
            b.c.game,
            b.c.kind,
            b.c.pick,
            b.c.status,
        ).where(b.c.status.in_(("settled", "refunded"))),
    )
    for row in _rows(db, decided):
        if row.status == "settled":
            report.settled(
                row.table_id,
                row.round_id,
                row.decided_at,
                row.currency,
                row.stake,
                row.payout,
                row.game,
                row.kind,
                _JSON.decode(row.pick),
            )
        else:
            report.refunded(row.table_id, row.round_id, row.decided_at, row.currency, row.stake)
    adjusted = only(a, select(a.c.table_id, a.c.round_id, a.c.at, a.c.currency, a.c.delta))
    for row in _rows(db, adjusted):
        report.adjusted(row.table_id, row.round_id, row.at, row.currency, row.delta)
    return report


def _rows(db: Connection, query: Any) -> Any:
    """The query's rows, fetched `_STREAMED` at a time."""
    return db.execute(query.execution_options(yield_per=_STREAMED))


_M, _R, _C = schema.report_money, schema.report_rounds, schema.report_corrections
_OUTCOME: Final = msgspec.json.Decoder(list[int | str] | None)


def _build(db: Connection, table_id: str | None, quarters: tuple[str | None, str | None]) -> Report:
    report = Report()
    first, after = quarters

    def only(table: Any) -> Any:
        query = select(table)
        if table_id is not None:
            query = query.where(table.c.table_id == table_id)
        if first is not None:
            query = query.where(table.c.quarter >= first)
        if after is not None:
            query = query.where(table.c.quarter < after)
        return query

    money, rounds, corrections = only(_M), only(_R), only(_C)
    # Read as tuples in the order of the core's fields: a period of a year is millions of rows.
    kept = report.money
    for (
        table,
        game,
        quarter,
        currency,
        bets,
        stakes,
        refunds,
        paid,
        adjusted,
        weighted,
    ) in db.execute(money.with_only_columns(*_MONEY_COLUMNS)).tuples():
        numerator, _, denominator = weighted.partition("/")
        rtp = Fraction(int(numerator), int(denominator or 1))
        kept[(table, game, quarter, currency)] = Money(
            table, game, quarter, currency, bets, stakes, refunds, paid, adjusted, rtp
        )
    counted = report.rounds
    read = rounds.with_only_columns(*_ROUND_COLUMNS).execution_options(yield_per=_STREAMED)
    for row in db.execute(read).tuples():
        counted[row[:3]] = Rounds(*row)
    order = (_C.c.table_id, _C.c.round_id, _C.c.n)
    for row in db.execute(corrections.order_by(*order)):
        report.corrections.append(
            Correction(
                table_id=row.table_id,
                round_id=row.round_id,
                game=row.game,
                day=row.quarter,
                at=row.at,
                n=row.n,
                cause=row.cause,
                reason=row.reason,
                authorized_by=row.authorized_by,
                before=_OUTCOME.decode(row.before) if row.before is not None else None,
                after=_OUTCOME.decode(row.after) if row.after is not None else None,
            )
        )
    return report


def of_batch(
    changes: Changes,
    games: Mapping[tuple[str, str], str],
    outcomes: Mapping[tuple[str, str], list[int | str]],
    numbers: Mapping[tuple[str, str], int],
) -> Report:
    """The figures one batch adds: its accepted round events in order, then its decisions and
    adjustments, given the games of the rounds it touches and, for those it corrects or voids,
    their outcome and count of corrections before it. The decisions that count in one place of
    the report (`Report.money_slot`) for one wager are fed together, summed: the core's exact
    fractions are computed per wager and place, not per bet."""
    report = Report()
    report.games.update(games)
    report.outcomes.update(outcomes)
    report.numbers.update(numbers)
    for event, _ in changes.round_events:
        report.accepted(event)
    slot = report.money_slot
    places: dict[tuple[Any, ...], list[Any]] = {}
    for (_, settled, _, table, rnd, at, currency, game, kind, pick), (
        n,
        stakes,
        paid,
    ) in changes.decided.items():
        place = (settled, slot(table, rnd, at, currency), game, kind, pick)
        summed = places.get(place)
        if summed is None:
            places[place] = [table, rnd, at, currency, n, stakes, paid]
        else:
            summed[4] += n
            summed[5] += stakes
            summed[6] += paid
    for (settled, _, game, kind, pick), (
        table,
        rnd,
        at,
        currency,
        n,
        stakes,
        paid,
    ) in places.items():
        if settled:
            report.settled(table, rnd, at, currency, stakes, paid, game, kind, pick, bets=n)
        else:
            report.refunded(table, rnd, at, currency, stakes, bets=n)
    for adjustment in changes.adjustments.values():
        report.adjusted(
            adjustment["table_id"],
            adjustment["round_id"],
            adjustment["at"],
            adjustment["currency"],
            adjustment["delta"],
        )
    return report


def _store(db: Connection, insert: Any, more: Report) -> None:
    had = Report()
    # Read to be rewritten: locked (in key order) until the commit, so that two projectors
    # sharing the partitions never add to the same figures from one old value (a table's
    # records in two partitions, as after partitions were added, may be in both).
    money = (_M.c.table_id, _M.c.game, _M.c.quarter, _M.c.currency)
    for chunk in bulk.chunks(sorted(more.money)):
        found = db.execute(
            select(_M).where(tuple_(*money).in_(chunk)).order_by(*money).with_for_update()
        )
        for row in found:
            had.money[(row.table_id, row.game, row.quarter, row.currency)] = _money(row)
    rounds = (_R.c.table_id, _R.c.game, _R.c.quarter)
    for chunk in bulk.chunks(sorted(more.rounds)):
        found = db.execute(
            select(_R).where(tuple_(*rounds).in_(chunk)).order_by(*rounds).with_for_update()
        )
        for row in found:
            had.rounds[(row.table_id, row.game, row.quarter)] = _rounds(row)
    had.add(more)
    if had.money:
        rows = [
            _columns(m) | {"weighted_rtp": str(m.weighted_rtp)}
            for _, m in sorted(had.money.items())
        ]
        stmt = insert(_M)
        db.execute(
            stmt.on_conflict_do_update(
                index_elements=["table_id", "game", "quarter", "currency"],
                set_={c: stmt.excluded[c] for c in _MONEY_FIGURES},
            ),
            rows,
        )
    if had.rounds:
        stmt = insert(_R)
        db.execute(
            stmt.on_conflict_do_update(
                index_elements=["table_id", "game", "quarter"],
                set_={c: stmt.excluded[c] for c in _ROUND_FIGURES},
            ),
            [_columns(r) for _, r in sorted(had.rounds.items())],
        )
    if more.corrections:
        db.execute(
            insert(_C),
            [
                _columns(c) | {"before": _outcome_text(c.before), "after": _outcome_text(c.after)}
                for c in more.corrections
            ],
        )


def _corrected_so_far(
    db: Connection, keys: Iterable[tuple[str, str]]
) -> dict[tuple[str, str], int]:
    found: dict[tuple[str, str], int] = {}
    for chunk in bulk.chunks(sorted(keys)):
        query = (
            select(_C.c.table_id, _C.c.round_id, func.max(_C.c.n))
            .where(tuple_(_C.c.table_id, _C.c.round_id).in_(chunk))
            .group_by(_C.c.table_id, _C.c.round_id)
        )
        found.update(((t, r), n) for t, r, n in db.execute(query))
    return found


def _columns(row: Money | Rounds | Correction) -> dict[str, Any]:
    """A row of the core as its table's columns: its fields, `day` (a quarter hour) in `quarter`."""
    found = msgspec.structs.asdict(row)
    found["quarter"] = found.pop("day")
    return found


def _fields(row: Any) -> dict[str, Any]:
    """A row of a report table as the core's fields: its columns, `quarter` in `day`."""
    found = dict(row._mapping)
    found["day"] = found.pop("quarter")
    return found


def _money(row: Any) -> Money:
    """A row of `report_money` as the core's Money."""
    return Money(**{**_fields(row), "weighted_rtp": Fraction(row.weighted_rtp)})


def _rounds(row: Any) -> Rounds:
    """A row of `report_rounds` as the core's Rounds."""
    return Rounds(**_fields(row))


def _outcome_text(outcome: list[int | str] | None) -> str | None:
    return None if outcome is None else msgspec.json.encode(outcome).decode()


_MONEY_COLUMNS: Final = tuple(_M.c["quarter" if f == "day" else f] for f in Money.__struct_fields__)
_ROUND_COLUMNS: Final = tuple(
    _R.c["quarter" if f == "day" else f] for f in Rounds.__struct_fields__
)
_MONEY_FIGURES: Final = ("bets", "stakes", "refunds", "payouts", "adjustments", "weighted_rtp")
_ROUND_FIGURES: Final = ("results", "cancelled", "corrected", "voided")
