"""A bet's row keyed by its round: primary key (table_id, round_id, bet_id), and no recall index.

The recall index (table_id, round_id, seq) cost every bet written an index insert of its own,
about a tenth of PostgreSQL's work a bet (`make bench-readside`). The key led by the round now
serves the recall too: a round's bets are read by it and ordered by (seq, bet_id) in memory
(10,000 bets at most a round in the benchmark, well under the recall's 20 ms). A decision still
finds its bet's row by the key alone, since it names the bet's table and round. The contract
makes `bet_id` unique across all tables; were a table ever to repeat another's, the read side
now keeps both bets instead of merging one into the other.

On PostgreSQL the key's index is built again (the table is not rewritten): on a big database
this takes minutes, during which the projector and the API wait for the migration. Going down
fails on a database holding one bet id in two rounds, as it must.

Revision ID: 0008
Revises: 0007
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def _key(*columns: str) -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(
            "ALTER TABLE bets DROP CONSTRAINT bets_pkey, "
            f"ADD CONSTRAINT bets_pkey PRIMARY KEY ({', '.join(columns)})"
        )
        return
    # SQLite: the table made again as reflected, but for its key
    old = sa.Table("bets", sa.MetaData(), autoload_with=op.get_bind())
    new = sa.Table(
        "bets",
        sa.MetaData(),
        *(sa.Column(c.name, c.type, nullable=c.nullable) for c in old.columns),
        sa.PrimaryKeyConstraint(*columns, name="bets_pkey"),
    )
    for index in old.indexes:
        sa.Index(index.name, *(new.c[c.name] for c in index.columns))
    with op.batch_alter_table("bets", copy_from=new, recreate="always"):
        pass


def upgrade() -> None:
    op.drop_index("bets_round", table_name="bets")
    _key("table_id", "round_id", "bet_id")


def downgrade() -> None:
    _key("bet_id")
    op.create_index("bets_round", "bets", ["table_id", "round_id", "seq"])
