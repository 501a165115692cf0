"""Each round's outcome integrity state (`integrity_rounds`), kept by the projector so that
`GET /integrity` and its metric test the same windows as `croupier integrity`.

A database from before is filled here from its rounds' timelines (`steps`), fed to the same
counting code (`services.statistics.counted`): its tables' windows are then whole. The timelines
never kept a round's `dealer_id` and `shaker_id`, so its rounds from before are in no dealer or
shaker scope; a database projected again from the topics' beginning has them all. On a big
database this reads every step once, during which the projector and the API wait.

Revision ID: 0009
Revises: 0008
"""

from __future__ import annotations

from typing import Any, Final

import msgspec
import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None

_ID = sa.Text().with_variant(postgresql.TEXT(collation="C"), "postgresql")
COUNTING: Final = frozenset(
    ("round.opened", "round.result", "round.corrected", "round.cancelled", "round.voided")
)
"""The steps that move a round's counting state (the others leave it as it is)."""
_STEP: Final = msgspec.json.Decoder(dict[str, Any])


def upgrade() -> None:
    op.create_table(
        "integrity_rounds",
        sa.Column("table_id", _ID, primary_key=True),
        sa.Column("round_id", _ID, primary_key=True),
        sa.Column("game", sa.Text, nullable=False),
        sa.Column("dealer_id", _ID),
        sa.Column("shaker_id", _ID),
        sa.Column("at", sa.BigInteger),
        sa.Column("outcome", sa.Text),
        comment="each round's outcome integrity state (services/statistics/counted.py): opened "
        "and waiting for its result (at and outcome null), or counted with its result's instant "
        "(microseconds, UTC) and final outcome (JSON); a cancelled or voided round has no row",
    )
    _fill(op.get_bind())


def _fill(db: sa.Connection) -> None:
    from schemas.events import RoundEvent
    from services.history import schema
    from services.history.store.dialects import dialect_of
    from services.history.store.integrity import Outcomes
    from services.statistics.counted import Counted

    s = schema.steps
    counted = Counted()
    keys: set[tuple[str, str]] = set()
    rows = db.execute(
        sa.select(s.c.table_id, s.c.round_id, s.c.step).order_by(s.c.table_id, s.c.round_id, s.c.n)
    )
    for table_id, round_id, text in rows:
        step = _STEP.decode(text)
        if step["type"] not in COUNTING:
            continue
        fields = {k: v for k, v in step.items() if v is not None and not k.startswith("previous")}
        event = msgspec.convert(
            fields | {"v": 1, "table_id": table_id, "round_id": round_id}, RoundEvent
        )
        counted.accept(event)
        keys.add((table_id, round_id))
    Outcomes(db, dialect_of(db)).put(counted, keys)


def downgrade() -> None:
    op.drop_table("integrity_rounds")
