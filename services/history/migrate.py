"""Bring a read-side database to the newest schema (Alembic), safely from several processes."""

from __future__ import annotations

from importlib import resources

from alembic import command
from alembic.config import Config
from sqlalchemy import Engine, text

_LOCK = 0x63726F75  # any fixed number: PostgreSQL's advisory lock of croupier's migrations


def config() -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(resources.files("services.history") / "migrations"))
    return cfg


def upgrade(engine: Engine) -> None:
    """Run every migration not applied yet; concurrent callers on PostgreSQL wait their turn."""
    cfg = config()
    with engine.begin() as connection:
        if connection.dialect.name == "postgresql":
            connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _LOCK})
        cfg.attributes["connection"] = connection
        command.upgrade(cfg, "head")
