"""The read side's tables (SQLAlchemy Core), the same on PostgreSQL and SQLite.

The Alembic migrations in `services/history/migrations` create exactly these; a test checks that
the migrated database and this metadata agree. Outcomes and picks are JSON text, money is BIGINT
minor units, times are the events' RFC 3339 text plus microseconds since the epoch for sorting.
"""

from __future__ import annotations

from typing import Annotated, Any, Final, get_args, get_type_hints

import msgspec
from sqlalchemy import (
    BigInteger,
    Column,
    Dialect,
    Index,
    Integer,
    MetaData,
    Numeric,
    PrimaryKeyConstraint,
    Table,
    Text,
)
from sqlalchemy.dialects import postgresql
from sqlalchemy.types import TypeDecorator, TypeEngine

metadata: Final = MetaData()

Id: Final = Text().with_variant(postgresql.TEXT(collation="C"), "postgresql")
"""An id (bet, player, table, round, adjustment), or a quarter hour of the report: compared as
bytes, as SQLite compares text, on any PostgreSQL server whatever its locale; so pages come in
the same order from both, and the indexes on ids cost a third less to fill than under a libc
locale (migration 0005)."""


class Sum(TypeDecorator[int]):
    """An exact sum of money of any size, an int in Python: NUMERIC on PostgreSQL, decimal text
    on SQLite (whose integers stop at 64 bits). A day's figures of a table may pass 2**63 minor
    units where single bets never do (stakes up to 2**53, migration 0007)."""

    impl = Text
    cache_ok = True

    def load_dialect_impl(self, dialect: Dialect) -> TypeEngine[Any]:
        chosen = Numeric() if dialect.name == "postgresql" else Text()
        return dialect.type_descriptor(chosen)

    def process_bind_param(self, value: int | None, dialect: Dialect) -> Any:
        if value is None or dialect.name == "postgresql":
            return value
        return str(value)

    def process_result_value(self, value: Any, dialect: Dialect) -> int | None:
        return None if value is None else int(value)


positions: Final = Table(
    "positions",
    metadata,
    Column("topic", Text, primary_key=True),
    Column("partition", Integer, primary_key=True),
    Column("next_offset", BigInteger, nullable=False),
    comment="the next Kafka offset to project of each partition, moved in each batch's transaction",
)


Key = Annotated[str, Id]
"""An id column of a bet's row (`Id`)."""
Small = Annotated[int | None, Integer()]
"""A 32-bit column of a bet's row (`seq`); its other integers are BIGINT, its text TEXT."""


class BetRow(msgspec.Struct, array_like=True, frozen=True, gc=False):
    """A row of `bets`: its fields are the table's columns, in order, and the one place they are
    named (`bets` is made from them: `_columns`). The projection builds it, COPY writes it
    (`bulk`), the answers read it by name. Positional, not keyword-only like the wire's Structs:
    a bet's row is built once a bet, and keywords cost five times the call (measured: 0.58 µs
    against 0.11 µs)."""

    bet_id: Key
    player_id: Key
    table_id: Key
    round_id: Key
    sort_micros: int
    seq: Small
    kind: str | None
    pick: str | None
    stake: int
    currency: str
    placed_at: str | None
    status: str
    game: str | None = None
    result: str | None = None
    payout: int | None = None
    refund_reason: str | None = None
    decided_at: str | None = None
    decision_id: str | None = None
    dice: str | None = None
    discs: str | None = None
    decided_ts: int | None = None


def _columns(row: type[msgspec.Struct]) -> list[Column[Any]]:
    """The columns of a row type's fields, in order: the SQL type its annotation gives (else
    TEXT for str, BIGINT for int), NOT NULL unless it may be None."""
    columns: list[Column[Any]] = []
    for name, hint in get_type_hints(row, include_extras=True).items():
        given = [
            extra for extra in getattr(hint, "__metadata__", ()) if isinstance(extra, TypeEngine)
        ]
        python = get_args(hint)[0] if given else hint
        kinds = set(get_args(python)) or {python}
        sql = given[0] if given else (Text() if str in kinds else BigInteger())
        columns.append(Column(name, sql, nullable=type(None) in kinds))
    return columns


BET_COLUMNS: Final = BetRow.__struct_fields__
"""The columns of a bet's row, in the order of the `bets` table."""
PLACED: Final = ("sort_micros", "seq", "kind", "pick", "stake", "currency", "placed_at")
"""The columns a bet.placed sets on a row its decision created first."""
DECIDED: Final = BET_COLUMNS[BET_COLUMNS.index("status") :]
"""The columns a decision sets on a row its bet.placed created first."""

bets: Final = Table(
    "bets",
    metadata,
    *_columns(BetRow),
    PrimaryKeyConstraint("table_id", "round_id", "bet_id", name="bets_pkey"),
    comment="every confirmed bet: its bet.placed (accepted topic) and its committed decision",
)  # PostgreSQL: fillfactor 70 (migration 0002), room for the decision's in-place update
# Two indexes, each paid for at every bet written (migrations 0005, 0008). The key, led by the
# round, is also the recall's index: a round's bets are read by it and ordered by (seq, bet_id)
# in memory. A history page is read in the order (sort_micros, table_id, round_id, seq, bet_id):
# its index carries the leading keys, and the database orders the few rows that tie on them
# (PostgreSQL's incremental sort, SQLite's sort of the right part).
Index("bets_history", bets.c.player_id, bets.c.sort_micros)
adjustments: Final = Table(
    "adjustments",
    metadata,
    Column("adjustment_id", Id, primary_key=True),
    Column("bet_id", Id, nullable=False),
    Column("player_id", Id, nullable=False),
    Column("table_id", Id, nullable=False),
    Column("round_id", Id, nullable=False),
    Column("currency", Text, nullable=False),
    Column("n", Integer, nullable=False),
    Column("cause", Text, nullable=False),
    Column("result", Text, nullable=False),
    Column("previous_payout", BigInteger, nullable=False),
    Column("payout", BigInteger, nullable=False),
    Column("delta", BigInteger, nullable=False),
    Column("dice", Text),
    Column("discs", Text),
    Column("reason", Text, nullable=False),
    Column("authorized_by", Text, nullable=False),
    Column("at", Text, nullable=False),
    comment="every committed adjustment: a settled bet decided again after a correction or void",
)
Index("adjustments_bet", adjustments.c.bet_id, adjustments.c.n)
Index("adjustments_round", adjustments.c.table_id, adjustments.c.round_id)

rounds: Final = Table(
    "rounds",
    metadata,
    Column("table_id", Id, primary_key=True),
    Column("round_id", Id, primary_key=True),
    Column("game", Text),
    Column("phase", Text, nullable=False),
    Column("suspensions", Integer, nullable=False),
    Column("reshakes", Integer, nullable=False),
    Column("last_seq", Integer),
    Column("dice", Text),
    Column("discs", Text),
    Column("cancel_reason", Text),
    Column("steps", Integer, nullable=False),
    Column("version", BigInteger, nullable=False, server_default="0"),
    comment="every round an accepted event, a bet or a decision names",
)

steps: Final = Table(
    "steps",
    metadata,
    Column("table_id", Id, primary_key=True),
    Column("round_id", Id, primary_key=True),
    Column("n", Integer, primary_key=True),
    Column("step", Text, nullable=False),
    comment="a round's timeline: its accepted events in table order, as JSON",
)

tables: Final = Table(
    "tables",
    metadata,
    Column("table_id", Id, primary_key=True),
    Column("game", Text),
    Column("stats", Text),
    comment="every table: its game and its last table_stats record, verbatim",
)

players: Final = Table(
    "players",
    metadata,
    Column("player_id", Id, primary_key=True),
    Column("bets", BigInteger, nullable=False, server_default="0"),
    comment="every player a bet or decision names (counted by /health)",
)

counters: Final = Table(
    "counters",
    metadata,
    Column("name", Text, primary_key=True),
    Column("labels", Text, primary_key=True),
    Column("value", BigInteger, nullable=False),
    comment="the projector's monotonic counters (metrics), moved in each batch's transaction",
)

report_money: Final = Table(
    "report_money",
    metadata,  # stakes, refunds, payouts and adjustments: Sum (migration 0007)
    Column("table_id", Id, primary_key=True),
    Column("game", Text, primary_key=True),
    Column("quarter", Id, primary_key=True),
    Column("currency", Text, primary_key=True),
    Column("bets", BigInteger, nullable=False),
    Column("stakes", Sum, nullable=False),
    Column("refunds", Sum, nullable=False),
    Column("payouts", Sum, nullable=False),
    Column("adjustments", Sum, nullable=False),
    Column("weighted_rtp", Text, nullable=False),
    comment="the report's money by table, game, quarter hour (UTC, 2026-03-29T04:45Z) and "
    "currency, moved in each batch's transaction; weighted_rtp an exact fraction as text (n/d)",
)
Index("report_money_quarter", report_money.c.quarter)

report_rounds: Final = Table(
    "report_rounds",
    metadata,
    Column("table_id", Id, primary_key=True),
    Column("game", Text, primary_key=True),
    Column("quarter", Id, primary_key=True),
    Column("results", BigInteger, nullable=False),
    Column("cancelled", BigInteger, nullable=False),
    Column("corrected", BigInteger, nullable=False),
    Column("voided", BigInteger, nullable=False),
    comment="the report's round fates by table, game and quarter hour (UTC), moved in each "
    "batch's transaction",
)
Index("report_rounds_quarter", report_rounds.c.quarter)

report_corrections: Final = Table(
    "report_corrections",
    metadata,
    Column("table_id", Id, primary_key=True),
    Column("round_id", Id, primary_key=True),
    Column("n", Integer, primary_key=True),
    Column("game", Text, nullable=False),
    Column("quarter", Id, nullable=False),
    Column("at", Text, nullable=False),
    Column("cause", Text, nullable=False),
    Column("reason", Text, nullable=False),
    Column("authorized_by", Text, nullable=False),
    Column("before", Text),
    Column("after", Text),
    comment="the report's corrections and voids of each round, in order (n from 1), as JSON "
    "outcomes",
)

integrity_rounds: Final = Table(
    "integrity_rounds",
    metadata,
    Column("table_id", Id, primary_key=True),
    Column("round_id", Id, primary_key=True),
    Column("game", Text, nullable=False),
    Column("dealer_id", Id),
    Column("shaker_id", Id),
    Column("at", BigInteger),
    Column("outcome", Text),
    comment="each round's outcome integrity state (services/statistics/counted.py): opened and "
    "waiting for its result (at and outcome null), or counted with its result's instant "
    "(microseconds, UTC) and final outcome (JSON); a cancelled or voided round has no row",
)
Index("integrity_rounds_table", integrity_rounds.c.table_id, integrity_rounds.c.at)
