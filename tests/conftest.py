"""Settings every test session shares."""

from pathlib import Path

import pytest
from hypothesis import settings

EXAMPLES = Path(__file__).resolve().parent / "examples"

# Properties are checked for what they assert, never for how long an example takes: on a loaded
# or slow machine an example's first run (a schema compiled, a module imported) can pass
# hypothesis' default 200 ms deadline and fail a test that is right. Speed is measured in the
# benchmarks instead.
settings.register_profile("croupier", deadline=None)
settings.load_profile("croupier")


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """tests/examples builds and runs the example clients (Go, Java, Maven): only when named
    (`make test-examples`), never in a plain `pytest`."""
    if collection_path != EXAMPLES:
        return None
    named = [Path(arg.split("::")[0]).resolve() for arg in config.args]
    return not any(path == EXAMPLES or EXAMPLES in path.parents for path in named)
