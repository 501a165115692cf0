"""The example clients' tests (`make test-examples`): a real broker, the clients built once.

`pytest` alone leaves this folder out (tests/conftest.py): it needs Go, Java and Maven besides
the broker. Name it (`pytest tests/examples`) to run it.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.examples.clients import Binaries, build
from tests.kafka import session_broker
from tests.security.conftest import secured

__all__ = ["secured"]


@pytest.fixture(scope="session")
def kafka() -> Iterator[str]:
    with session_broker() as address:
        yield address


@pytest.fixture(scope="session")
def binaries() -> Binaries:
    return build()
