"""Rows loaded in bulk (binary COPY on PostgreSQL, made by the database's own encoder) read back
as they were given, whatever their text and numbers hold."""

from __future__ import annotations

from sqlalchemy import Engine, select

from services.history import bulk, schema
from services.history.store.dialects import dialect_of

TEXTS = [
    ("T1", "sicbo", "plain ASCII"),
    ("T-é", "xocdia", "accents: é à ç, Thai: ไฮโล, an emoji: 🎲"),
    ("T\t2", "thai_hilo", "a tab\there, a newline\nthere, a backslash \\ and \\N"),
    ("T3", "sicbo", None),
    ("T4", "sicbo", ""),
]


def test_rows_encoded_ahead_of_their_transaction_read_back_as_given(engine: Engine) -> None:
    dialect = dialect_of(engine)
    encoder = dialect.encoder(engine, schema.tables)
    assert (encoder is None) == (engine.dialect.name == "sqlite")
    ready = bulk.encoded(encoder, TEXTS)
    with engine.begin() as db:
        dialect.copy_rows(db, schema.tables, ready)
    with engine.connect() as db:
        found = db.execute(select(schema.tables).order_by(schema.tables.c.table_id)).tuples()
        assert sorted(found) == sorted(TEXTS)


def test_rows_given_as_they_are_are_encoded_on_the_transactions_connection(
    engine: Engine,
) -> None:
    with engine.begin() as db:
        dialect_of(db).copy_rows(db, schema.tables, TEXTS)
    with engine.connect() as db:
        assert sorted(db.execute(select(schema.tables)).tuples()) == sorted(TEXTS)


STEPS = [
    ("T1", "R1", 1, "{}"),
    ("T1", "R1", 2**31 - 1, "a step"),
    ("T-é", "R-ไฮโล", 7, ""),
]


def test_rows_encoded_for_another_table_are_encoded_again_for_the_one_they_go_into(
    engine: Engine,
) -> None:
    ready = bulk.Encoded(STEPS, b"not steps' encoding", (25, 25, 25, 25))  # all four as text
    with engine.begin() as db:
        dialect_of(db).copy_rows(db, schema.steps, ready)
    with engine.connect() as db:
        assert sorted(db.execute(select(schema.steps)).tuples()) == sorted(STEPS)


def test_every_column_of_the_tables_loaded_in_bulk_has_a_binary_copy_type() -> None:
    for table in (schema.bets, schema.rounds, schema.steps, bulk.STAGE_BETS, bulk.STAGE_ROUNDS):
        types = bulk.column_types(table)
        assert len(types) == len(table.columns)
    assert bulk.column_types(schema.steps) == (25, 25, 23, 25)  # text, text, int4, text
    assert bulk.column_types(bulk.STAGE_PLAYERS) == (25, 20)  # text, int8
