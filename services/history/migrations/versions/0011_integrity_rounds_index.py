"""A table's counted rounds by instant (`integrity_rounds_table`): a board's chart reads its
table's last rounds (`history.integrity.table_distribution`) without scanning the table's whole
history, however long the table has run.

Revision ID: 0011
Revises: 0010
"""

from __future__ import annotations

from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("integrity_rounds_table", "integrity_rounds", ["table_id", "at"])


def downgrade() -> None:
    op.drop_index("integrity_rounds_table", table_name="integrity_rounds")
