"""Adjustments: settled bets decided again after a correction or a void (contract 1.1).

Revision ID: 0003
Revises: 0002
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "adjustments",
        sa.Column("adjustment_id", sa.Text, primary_key=True),
        sa.Column("bet_id", sa.Text, nullable=False),
        sa.Column("player_id", sa.Text, nullable=False),
        sa.Column("table_id", sa.Text, nullable=False),
        sa.Column("round_id", sa.Text, nullable=False),
        sa.Column("currency", sa.Text, nullable=False),
        sa.Column("n", sa.Integer, nullable=False),
        sa.Column("cause", sa.Text, nullable=False),
        sa.Column("result", sa.Text, nullable=False),
        sa.Column("previous_payout", sa.BigInteger, nullable=False),
        sa.Column("payout", sa.BigInteger, nullable=False),
        sa.Column("delta", sa.BigInteger, nullable=False),
        sa.Column("dice", sa.Text),
        sa.Column("discs", sa.Text),
        sa.Column("reason", sa.Text, nullable=False),
        sa.Column("authorized_by", sa.Text, nullable=False),
        sa.Column("at", sa.Text, nullable=False),
        comment="every committed adjustment: a settled bet decided again after a correction or "
        "void",
    )
    op.create_index("adjustments_bet", "adjustments", ["bet_id", "n"])
    op.create_index("adjustments_round", "adjustments", ["table_id", "round_id"])


def downgrade() -> None:
    op.drop_index("adjustments_round", "adjustments")
    op.drop_index("adjustments_bet", "adjustments")
    op.drop_table("adjustments")
