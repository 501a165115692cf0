"""Integration tests run against a real Kafka broker; without one they fail and say how to start it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.kafka import session_broker


@pytest.fixture(scope="session")
def kafka() -> Iterator[str]:
    with session_broker() as address:
        yield address
