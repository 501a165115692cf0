"""Alembic environment of the read side: always given a connection by `services.history.migrate`."""

from __future__ import annotations

from alembic import context

from services.history.schema import metadata

connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=metadata, render_as_batch=True)
with context.begin_transaction():
    context.run_migrations()
