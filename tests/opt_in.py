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


def tolerate_leaks(here: Path, items: list[pytest.Item]) -> None:
    """For a fault suite's `pytest_collection_modifyitems`: its tests ignore the ResourceWarnings
    of clients cut off by a killed or paused broker. kafka-python 3.0.12 does not close the
    socket of a refused connection (kafka/net/inet.py, sock_connect raises and drops it); while a
    broker is down that happens many times, and the garbage collector finds them much later.
    Transports and event loops of clients cut off by a killed broker leak the same way."""
    for item in items:
        if here in Path(item.path).resolve().parents:
            item.add_marker(pytest.mark.filterwarnings("ignore:unclosed <socket:ResourceWarning"))
            item.add_marker(pytest.mark.filterwarnings("ignore:unclosed transport:ResourceWarning"))
            item.add_marker(
                pytest.mark.filterwarnings("ignore:unclosed event loop:ResourceWarning")
            )
