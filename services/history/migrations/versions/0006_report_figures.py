"""The report's figures kept by the projector: money, round fates and corrections.

Each batch's transaction adds what it projects to them, so `GET /report` reads a few rows per
table and day instead of every bet. A database from before is filled from its rows by 0010 (which
keeps the figures per quarter hour instead: the report as it was computed until now; on a big
database this reads every decided bet once, some 25 s a million here, during which the projector
and the API wait for the migration).

Revision ID: 0006
Revises: 0005
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

_ID = sa.Text().with_variant(postgresql.TEXT(collation="C"), "postgresql")


def upgrade() -> None:
    op.create_table(
        "report_money",
        sa.Column("table_id", _ID, primary_key=True),
        sa.Column("game", sa.Text, primary_key=True),
        sa.Column("day", sa.Text, primary_key=True),
        sa.Column("currency", sa.Text, primary_key=True),
        sa.Column("bets", sa.BigInteger, nullable=False),
        sa.Column("stakes", sa.BigInteger, nullable=False),
        sa.Column("refunds", sa.BigInteger, nullable=False),
        sa.Column("payouts", sa.BigInteger, nullable=False),
        sa.Column("adjustments", sa.BigInteger, nullable=False),
        sa.Column("weighted_rtp", sa.Text, nullable=False),
        comment="the report's money by table, game, UTC day and currency, moved in each batch's "
        "transaction; weighted_rtp an exact fraction as text (n/d)",
    )
    op.create_table(
        "report_rounds",
        sa.Column("table_id", _ID, primary_key=True),
        sa.Column("game", sa.Text, primary_key=True),
        sa.Column("day", sa.Text, primary_key=True),
        sa.Column("results", sa.BigInteger, nullable=False),
        sa.Column("cancelled", sa.BigInteger, nullable=False),
        sa.Column("corrected", sa.BigInteger, nullable=False),
        sa.Column("voided", sa.BigInteger, nullable=False),
        comment="the report's round fates by table, game and UTC day, moved in each batch's "
        "transaction",
    )
    op.create_table(
        "report_corrections",
        sa.Column("table_id", _ID, primary_key=True),
        sa.Column("round_id", _ID, primary_key=True),
        sa.Column("n", sa.Integer, primary_key=True),
        sa.Column("game", sa.Text, nullable=False),
        sa.Column("day", sa.Text, nullable=False),
        sa.Column("at", sa.Text, nullable=False),
        sa.Column("cause", sa.Text, nullable=False),
        sa.Column("reason", sa.Text, nullable=False),
        sa.Column("authorized_by", sa.Text, nullable=False),
        sa.Column("before", sa.Text),
        sa.Column("after", sa.Text),
        comment="the report's corrections and voids of each round, in order (n from 1), as JSON "
        "outcomes",
    )
    # A database from before is filled from its rows by 0010, which keeps them per quarter hour.


def downgrade() -> None:
    op.drop_table("report_corrections")
    op.drop_table("report_rounds")
    op.drop_table("report_money")
