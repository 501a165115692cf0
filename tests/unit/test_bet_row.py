"""A bet's row type names the `bets` table's columns, in order: the table is made from it."""

from __future__ import annotations

import msgspec
from sqlalchemy import BigInteger, Integer, Text
from sqlalchemy.dialects import postgresql, sqlite

from services.history import schema


class Example(msgspec.Struct, array_like=True):
    key: schema.Key
    count: int
    seq: schema.Small
    note: str | None
    name: str
    amount: int | None = None


def test_a_row_types_fields_become_columns_of_their_annotated_or_natural_sql_type() -> None:
    columns = schema._columns(Example)
    assert [(c.name, c.nullable) for c in columns] == [
        ("key", False),
        ("count", False),
        ("seq", True),
        ("note", True),
        ("name", False),
        ("amount", True),
    ]
    kinds = [type(c.type) for c in columns[1:]]
    assert kinds == [BigInteger, Integer, Text, Text, BigInteger]
    key = columns[0].type
    assert key.compile(dialect=postgresql.dialect()) == 'TEXT COLLATE "C"'  # type: ignore[no-untyped-call]
    assert key.compile(dialect=sqlite.dialect()) == "TEXT"  # type: ignore[no-untyped-call]


def test_the_bets_table_has_a_bet_rows_fields_as_its_columns_in_order() -> None:
    assert schema.BetRow.__struct_fields__ == tuple(c.name for c in schema.bets.columns)
    assert [c.name for c in schema.bets.primary_key] == ["table_id", "round_id", "bet_id"]


def test_the_placed_and_decided_columns_are_columns_of_a_bet_row() -> None:
    fields = schema.BetRow.__struct_fields__
    assert set(schema.PLACED) <= set(fields)
    assert fields[fields.index("status") :] == schema.DECIDED
    assert not set(schema.PLACED) & set(schema.DECIDED)
