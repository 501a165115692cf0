"""Suites a plain `pytest` leaves out (the fault suites, the image's): collected only when asked for
by path, as `pytest tests/chaos` or a Makefile target does."""

from __future__ import annotations

from pathlib import Path

import pytest


def not_asked(here: Path, collection_path: Path, config: pytest.Config) -> bool | None:
    """For a suite's `pytest_ignore_collect`: True (leave it out) unless the command line names
    the suite's folder `here` or something inside it."""
    asked = [Path(arg.split("::")[0]).resolve() for arg in config.args]
    wanted = any(a == here or here in a.parents for a in asked)
    if collection_path.resolve() != here and not wanted:
        return True
    return None
