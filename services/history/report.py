"""The regulator's report from the read side's database: the same figures as from a replay file.

The rows the projector stored (accepted round events as steps, decided bets, adjustments) are fed
to the one report core, `services.reports.figures`, so a report from the database and one from
`croupier report FILE` of the same events agree figure for figure.
"""

from __future__ import annotations

from typing import Any, Final

import msgspec
from sqlalchemy import Connection, select

from services.history import schema
from services.reports.figures import Report

_JSON: Final = msgspec.json.Decoder()
_STREAMED: Final = 10_000
"""Rows fetched at a time (a server-side cursor on PostgreSQL), so memory does not grow with
the history."""
_FATES: Final = frozenset({"round.result", "round.cancelled", "round.corrected", "round.voided"})


def build(db: Connection, table_id: str | None = None) -> Report:
    """The report over every table (or one), from the database as it stands."""
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
