"""Ids compared as bytes on PostgreSQL (COLLATE "C"); the bets' indexes carry their leading keys.

Under a server's libc locale every comparison of two ids in an index went through the locale's
collation, and a server in a locale other than C.UTF-8 ordered ids differently from SQLite (which
compares bytes): now both order pages alike on any server. The history and recall indexes drop
the keys that only break ties (the database orders the few tied rows itself). Measured by
`make bench-readside-parts`' floor: a bet's row costs PostgreSQL about a third less to COPY.

On PostgreSQL the id columns' indexes are rebuilt (the tables are not rewritten): on a big
database this takes minutes, during which the projector and the API wait for the migration.

Revision ID: 0005
Revises: 0004
"""

from __future__ import annotations

from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

IDS = {
    "bets": ("bet_id", "player_id", "table_id", "round_id"),
    "adjustments": ("adjustment_id", "bet_id", "player_id", "table_id", "round_id"),
    "rounds": ("table_id", "round_id"),
    "steps": ("table_id", "round_id"),
    "tables": ("table_id",),
    "players": ("player_id",),
}


def _collate(collation: str) -> None:
    if op.get_bind().dialect.name != "postgresql":
        return  # SQLite compares text as bytes already
    for table, columns in IDS.items():
        clauses = ", ".join(f'ALTER COLUMN {c} TYPE text COLLATE "{collation}"' for c in columns)
        op.execute(f"ALTER TABLE {table} {clauses}")


def upgrade() -> None:
    op.drop_index("bets_history", table_name="bets")
    op.drop_index("bets_round", table_name="bets")
    _collate("C")
    op.create_index("bets_history", "bets", ["player_id", "sort_micros"])
    op.create_index("bets_round", "bets", ["table_id", "round_id", "seq"])


def downgrade() -> None:
    op.drop_index("bets_round", table_name="bets")
    op.drop_index("bets_history", table_name="bets")
    _collate("default")
    op.create_index("bets_round", "bets", ["table_id", "round_id", "seq", "bet_id"])
    op.create_index(
        "bets_history",
        "bets",
        ["player_id", "sort_micros", "table_id", "round_id", "seq", "bet_id"],
    )
