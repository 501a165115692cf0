"""Bring a read-side database to the newest schema (Alembic), safely from several processes."""

from __future__ import annotations

from importlib import resources
from typing import TYPE_CHECKING, Final

from sqlalchemy import Engine, inspect, text

if TYPE_CHECKING:
    from alembic.config import Config

_LOCK = 0x63726F75  # any fixed number: PostgreSQL's advisory lock of croupier's migrations
HEAD: Final = "0011"
"""The newest migration (a test checks it is Alembic's head): a database already there is left
alone without loading Alembic, so a restart costs one query."""


def config() -> Config:
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(resources.files("services.history") / "migrations"))
    return cfg


def current(engine: Engine) -> str | None:
    """The database's migration, None before the first."""
    with engine.connect() as connection:
        if not inspect(connection).has_table("alembic_version"):
            return None
        found: str | None = connection.execute(
            text("SELECT version_num FROM alembic_version")
        ).scalar_one_or_none()
        return found


def upgrade(engine: Engine) -> None:
    """Run every migration not applied yet; concurrent callers on PostgreSQL wait their turn."""
    if current(engine) == HEAD:
        return
    from alembic import command

    cfg = config()
    with engine.begin() as connection:
        if connection.dialect.name == "postgresql":
            connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _LOCK})
        cfg.attributes["connection"] = connection
        command.upgrade(cfg, "head")
