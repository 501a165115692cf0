"""The image's run test: `croupier worker` and `croupier api` from the image `make image` builds,
run by podman against the local broker and PostgreSQL. `pytest tests/image` (or
`make test-image`) runs it; a plain `pytest` leaves it out, since it needs the image."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.kafka import session_broker
from tests.opt_in import not_asked

HERE = Path(__file__).resolve().parent


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    return not_asked(HERE, collection_path, config)


@pytest.fixture(scope="session")
def kafka() -> Iterator[str]:
    with session_broker() as address:
        yield address
