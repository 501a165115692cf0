"""A bet's row type and the `bets` table name the same columns, in the same order."""

from __future__ import annotations

from services.history import schema


def test_a_bet_rows_fields_are_the_bets_tables_columns_in_order() -> None:
    assert schema.BetRow.__struct_fields__ == tuple(c.name for c in schema.bets.columns)


def test_the_placed_and_decided_columns_are_columns_of_a_bet_row() -> None:
    fields = schema.BetRow.__struct_fields__
    assert set(schema.PLACED) <= set(fields)
    assert fields[fields.index("status") :] == schema.DECIDED
    assert not set(schema.PLACED) & set(schema.DECIDED)
