"""A coroutine run to its end from blocking code: the commands, the kafka-python clients."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def finish(work: Coroutine[Any, Any, T], name: str = "croupier-blocking") -> T:
    """Run a coroutine to its end from code without an event loop (or beside a running one, in
    a thread of its own, named `name`); its exception is raised here."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(work)
    result: list[T] = []
    failure: list[BaseException] = []

    def run() -> None:
        try:
            result.append(asyncio.run(work))
        except BaseException as error:
            failure.append(error)

    thread = threading.Thread(target=run, name=name)
    thread.start()
    thread.join()
    if failure:
        raise failure[0]
    return result[0]
