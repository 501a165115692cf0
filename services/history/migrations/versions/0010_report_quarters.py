"""The report's figures per quarter hour (UTC) instead of per UTC day, so that a report adds them
up into gaming days that start at any quarter hour of any zone (`services.reports.days`).

The figures of a database from before are made again from its rows (`Figures.from_rows`: every
decided bet read once, some 25 s a million here, during which the projector and the API wait),
and `day` becomes `quarter` (2026-03-29T04:45Z, compared as bytes), indexed for a period's
quarters. Going down makes the UTC days' figures again from the rows, the same way.

Revision ID: 0010
Revises: 0009
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec
import sqlalchemy as sa
from alembic import op
from msgspec.structs import asdict
from sqlalchemy.dialects import postgresql

if TYPE_CHECKING:
    from services.reports.figures import Report

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None

_ID = sa.Text().with_variant(postgresql.TEXT(collation="C"), "postgresql")
TABLES = ("report_money", "report_rounds", "report_corrections")
INDEXED = ("report_money", "report_rounds")
SUMS = ("stakes", "refunds", "payouts", "adjustments")
COMMENTS = {
    "report_money": (
        "the report's money by table, game, UTC day and currency, moved in each batch's "
        "transaction; weighted_rtp an exact fraction as text (n/d)",
        "the report's money by table, game, quarter hour (UTC, 2026-03-29T04:45Z) and currency, "
        "moved in each batch's transaction; weighted_rtp an exact fraction as text (n/d)",
    ),
    "report_rounds": (
        "the report's round fates by table, game and UTC day, moved in each batch's transaction",
        "the report's round fates by table, game and quarter hour (UTC), moved in each batch's "
        "transaction",
    ),
}


def upgrade() -> None:
    from services.history.store.report_figures import Figures

    _rename("day", "quarter", sa.Text(), _ID)
    for table in INDEXED:
        op.create_index(f"{table}_quarter", table, ["quarter"])
    _comment(after=True)
    figures = Figures(op.get_bind())
    figures.add(figures.from_rows())


def downgrade() -> None:
    from services.history.store.report_figures import Figures
    from services.reports.daily import daily

    days = daily(Figures(op.get_bind()).from_rows())
    for table in INDEXED:
        op.drop_index(f"{table}_quarter", table_name=table)
    _rename("quarter", "day", _ID, sa.Text())
    _comment(after=False)
    _put(op.get_bind(), days)


def _rename(
    before: str, after: str, was: sa.types.TypeEngine[str], becomes: sa.types.TypeEngine[str]
) -> None:
    """Empty the report's tables and rename (and retype) their column of days or quarters."""
    for table in TABLES:
        op.execute(sa.text(f"DELETE FROM {table}"))
        with op.batch_alter_table(table) as batch:  # SQLite: the table made again
            batch.alter_column(
                before,
                new_column_name=after,
                type_=becomes,
                existing_type=was,
                existing_nullable=False,
            )


def _comment(*, after: bool) -> None:
    """The tables' comments (PostgreSQL's; SQLite keeps none)."""
    if op.get_bind().dialect.name != "postgresql":
        return
    for table, (before, now) in COMMENTS.items():
        op.create_table_comment(
            table, now if after else before, existing_comment=before if after else now
        )


def _put(db: sa.Connection, days: Report) -> None:
    """The UTC days' figures, in the tables as they were before (their columns the core's
    fields, `day` among them)."""
    from services.history.schema import Sum
    from services.reports.figures import Correction, Money, Rounds

    def table(name: str, fields: tuple[str, ...]) -> sa.TableClause:
        return sa.table(name, *(sa.column(f, Sum() if f in SUMS else None) for f in fields))

    def text(outcome: list[int | str] | None) -> str | None:
        return None if outcome is None else msgspec.json.encode(outcome).decode()

    money = [asdict(m) | {"weighted_rtp": str(m.weighted_rtp)} for m in days.money.values()]
    rounds = [asdict(r) for r in days.rounds.values()]
    corrections = [
        asdict(c) | {"before": text(c.before), "after": text(c.after)} for c in days.corrections
    ]
    for name, fields, rows in (
        ("report_money", Money.__struct_fields__, money),
        ("report_rounds", Rounds.__struct_fields__, rounds),
        ("report_corrections", Correction.__struct_fields__, corrections),
    ):
        if rows:
            db.execute(table(name, fields).insert(), rows)
