"""The report's money sums exact whatever their size: a day's stakes or payouts at a table may pass
2**63 minor units (a bet's stake may be up to 2**53), where BIGINT (and SQLite's integers) stop,
and the projector failed on its batch at every start.

PostgreSQL keeps them as NUMERIC, SQLite as decimal text (its integers stop at 64 bits): the
columns of `schema.Sum`. Going down fails on a database holding a sum past 64 bits, as it must.

Revision ID: 0007
Revises: 0006
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

SUMS = ("stakes", "refunds", "payouts", "adjustments")


def upgrade() -> None:
    _retype(sa.BigInteger(), sa.Numeric(), sa.Text())


def downgrade() -> None:
    _retype(sa.Numeric(), sa.BigInteger(), sa.BigInteger(), before_on_sqlite=sa.Text())


def _retype(
    before: sa.types.TypeEngine[Any],
    on_postgresql: sa.types.TypeEngine[Any],
    on_sqlite: sa.types.TypeEngine[Any],
    *,
    before_on_sqlite: sa.types.TypeEngine[Any] | None = None,
) -> None:
    if op.get_bind().dialect.name == "postgresql":
        cast = on_postgresql.compile(dialect=op.get_bind().dialect)
        for column in SUMS:
            op.alter_column(
                "report_money",
                column,
                type_=on_postgresql,
                existing_type=before,
                existing_nullable=False,
                postgresql_using=f"{column}::{cast}",
            )
        return
    with op.batch_alter_table("report_money") as batch:  # SQLite: the table made again
        for column in SUMS:
            batch.alter_column(
                column,
                type_=on_sqlite,
                existing_type=before_on_sqlite or before,
                existing_nullable=False,
            )
