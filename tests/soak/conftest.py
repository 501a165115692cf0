"""The soak: a day on the floor in an hour, under faults, only when asked for by path.

`pytest tests/soak` (or `make soak`, `make soak-ci`) runs it; a plain `pytest` leaves it out.
Its cluster, PostgreSQL and processes are its own (tests/soak/stack.py), started and wiped by it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.opt_in import not_asked, tolerate_leaks

HERE = Path(__file__).resolve().parent


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    return not_asked(HERE, collection_path, config)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    tolerate_leaks(HERE, items)
