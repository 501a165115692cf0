"""Bets decided after they were placed are updated in place: no index on the decision's columns.

The partial index of pending bets made every decision a new row version in every index of
`bets`; without it PostgreSQL can update the row where it is (a HOT update), given free room in
its page (fillfactor 70). Pending bets are counted from the counters instead.

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.drop_index("bets_pending", table_name="bets")
    if op.get_bind().dialect.name == "postgresql":
        op.execute("ALTER TABLE bets SET (fillfactor = 70)")


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("ALTER TABLE bets RESET (fillfactor)")
    op.create_index(
        "bets_pending",
        "bets",
        ["bet_id"],
        postgresql_where=sa.text("status = 'pending'"),
        sqlite_where=sa.text("status = 'pending'"),
    )
