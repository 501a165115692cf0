"""Tests of the read side against both of its databases: a real PostgreSQL and SQLite."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine

from tests.database import BACKENDS, migrated


@pytest.fixture(params=BACKENDS)
def engine(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Engine]:
    """A fresh, migrated database of each backend."""
    with migrated(request.param, tmp_path) as engine:
        yield engine
