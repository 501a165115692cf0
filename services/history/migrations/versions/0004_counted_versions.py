"""Each player's count of bets (a history's total without counting them), each round's version
(a cached recall is current while it has not moved); the fate's timestamp is no longer needed.

The decision latency is now measured from the `at` every decision carries, so `rounds.fate_ts`
goes. `players.bets` starts from the bets already projected.

Revision ID: 0004
Revises: 0003
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("players", sa.Column("bets", sa.BigInteger, nullable=False, server_default="0"))
    op.execute(
        "UPDATE players SET bets = (SELECT count(*) FROM bets WHERE bets.player_id = "
        "players.player_id)"
    )
    op.add_column("rounds", sa.Column("version", sa.BigInteger, nullable=False, server_default="0"))
    op.drop_column("rounds", "fate_ts")


def downgrade() -> None:
    op.add_column("rounds", sa.Column("fate_ts", sa.BigInteger))
    op.drop_column("rounds", "version")
    op.drop_column("players", "bets")
