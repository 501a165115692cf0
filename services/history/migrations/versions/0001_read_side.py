"""The read side on a database: positions, bets, rounds, steps, tables, players, counters.

Revision ID: 0001
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "positions",
        sa.Column("topic", sa.Text, primary_key=True),
        sa.Column("partition", sa.Integer, primary_key=True),
        sa.Column("next_offset", sa.BigInteger, nullable=False),
        comment="the next Kafka offset to project of each partition, moved in each batch's "
        "transaction",
    )
    op.create_table(
        "bets",
        sa.Column("bet_id", sa.Text, primary_key=True),
        sa.Column("player_id", sa.Text, nullable=False),
        sa.Column("table_id", sa.Text, nullable=False),
        sa.Column("round_id", sa.Text, nullable=False),
        sa.Column("sort_micros", sa.BigInteger, nullable=False),
        sa.Column("seq", sa.Integer),
        sa.Column("kind", sa.Text),
        sa.Column("pick", sa.Text),
        sa.Column("stake", sa.BigInteger, nullable=False),
        sa.Column("currency", sa.Text, nullable=False),
        sa.Column("placed_at", sa.Text),
        sa.Column("status", sa.Text, nullable=False),
        sa.Column("game", sa.Text),
        sa.Column("result", sa.Text),
        sa.Column("payout", sa.BigInteger),
        sa.Column("refund_reason", sa.Text),
        sa.Column("decided_at", sa.Text),
        sa.Column("decision_id", sa.Text),
        sa.Column("dice", sa.Text),
        sa.Column("discs", sa.Text),
        sa.Column("decided_ts", sa.BigInteger),
        comment="every confirmed bet: its bet.placed (accepted topic) and its committed decision",
    )
    op.create_index(
        "bets_history",
        "bets",
        ["player_id", "sort_micros", "table_id", "round_id", "seq", "bet_id"],
    )
    op.create_index("bets_round", "bets", ["table_id", "round_id", "seq", "bet_id"])
    op.create_index(
        "bets_pending",
        "bets",
        ["bet_id"],
        postgresql_where=sa.text("status = 'pending'"),
        sqlite_where=sa.text("status = 'pending'"),
    )
    op.create_table(
        "rounds",
        sa.Column("table_id", sa.Text, primary_key=True),
        sa.Column("round_id", sa.Text, primary_key=True),
        sa.Column("game", sa.Text),
        sa.Column("phase", sa.Text, nullable=False),
        sa.Column("suspensions", sa.Integer, nullable=False),
        sa.Column("reshakes", sa.Integer, nullable=False),
        sa.Column("last_seq", sa.Integer),
        sa.Column("dice", sa.Text),
        sa.Column("discs", sa.Text),
        sa.Column("cancel_reason", sa.Text),
        sa.Column("fate_ts", sa.BigInteger),
        sa.Column("steps", sa.Integer, nullable=False),
        comment="every round an accepted event, a bet or a decision names",
    )
    op.create_table(
        "steps",
        sa.Column("table_id", sa.Text, primary_key=True),
        sa.Column("round_id", sa.Text, primary_key=True),
        sa.Column("n", sa.Integer, primary_key=True),
        sa.Column("step", sa.Text, nullable=False),
        comment="a round's timeline: its accepted events in table order, as JSON",
    )
    op.create_table(
        "tables",
        sa.Column("table_id", sa.Text, primary_key=True),
        sa.Column("game", sa.Text),
        sa.Column("stats", sa.Text),
        comment="every table: its game and its last table_stats record, verbatim",
    )
    op.create_table(
        "players",
        sa.Column("player_id", sa.Text, primary_key=True),
        comment="every player a bet or decision names (counted by /health)",
    )
    op.create_table(
        "counters",
        sa.Column("name", sa.Text, primary_key=True),
        sa.Column("labels", sa.Text, primary_key=True),
        sa.Column("value", sa.BigInteger, nullable=False),
        comment="the projector's monotonic counters (metrics), moved in each batch's transaction",
    )


def downgrade() -> None:
    for table in ("counters", "players", "tables", "steps", "rounds", "bets", "positions"):
        op.drop_table(table)
