"""End-to-end tests run the whole system on a real Kafka broker; without one they fail and say so."""

from __future__ import annotations

import pytest

from tests.kafka import bootstrap, reachable


@pytest.fixture(scope="session")
def kafka() -> str:
    address = bootstrap()
    if not reachable(address):
        pytest.fail(
            f"no Kafka broker at {address}: run `make kafka-up` (or set KAFKA_BOOTSTRAP) and retry",
            pytrace=False,
        )
    return address
