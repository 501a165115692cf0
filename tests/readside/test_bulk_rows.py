"""Rows loaded in bulk (COPY on PostgreSQL, made by the database's own encoder) read back as
they were given, whatever their text holds."""

from __future__ import annotations

from sqlalchemy import Engine, select

from services.history import bulk, schema

TEXTS = [
    ("T1", "sicbo", "plain ASCII"),
    ("T-é", "xocdia", "accents: é à ç, Thai: ไฮโล, an emoji: 🎲"),
    ("T\t2", "thai_hilo", "a tab\there, a newline\nthere, a backslash \\ and \\N"),
    ("T3", "sicbo", None),
    ("T4", "sicbo", ""),
]


def test_rows_encoded_ahead_of_their_transaction_read_back_as_given(engine: Engine) -> None:
    encoder = bulk.encoder(engine)
    assert (encoder is None) == (engine.dialect.name == "sqlite")
    ready = bulk.encoded(encoder, TEXTS)
    with engine.begin() as db:
        bulk.copy_rows(db, schema.tables, ready)
    with engine.connect() as db:
        found = db.execute(select(schema.tables).order_by(schema.tables.c.table_id)).tuples()
        assert sorted(found) == sorted(TEXTS)


def test_rows_given_as_they_are_are_encoded_on_the_transactions_connection(
    engine: Engine,
) -> None:
    with engine.begin() as db:
        bulk.copy_rows(db, schema.tables, TEXTS)
    with engine.connect() as db:
        assert sorted(db.execute(select(schema.tables)).tuples()) == sorted(TEXTS)
