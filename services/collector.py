"""Python's cyclic garbage collector, paused or run on a clock instead of by allocations.

`paused`: off while a worker restores its state (hundreds of thousands of objects that all stay,
each collection walking them again). `clocked`: a projecting process's collector.

Left to itself, the collector walks the young objects every 700 allocations net of frees, and the
older ones every 10 and 100 of those. A projector's batch is hundreds of thousands of rows
(tuples of a bet's columns) and decided halves that stay alive until the batch is written, so
every such walk visits them and each of their fields again: a fifth of the projector's processor
time, measured (docs/DESIGN.md, "The collector on a clock"). Yet nothing the projection builds
forms a cycle (rows are tuples of str, int and None; decoded journals are msgspec Structs made
with `gc=False`; the dicts hold those): reference counting frees all of it as soon as a batch is
written. What does form cycles (asyncio's futures and exceptions with their tracebacks, the
clients' internals) is little. So while a projector runs, automatic collection is off, and one
full collection runs every `every_s` seconds, which frees those cycles as before.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass

EVERY_S = 60.0
"""How often a projecting process collects its cyclic garbage."""


@dataclass
class Collections:
    """What the clocked collections did so far (for the projector's progress)."""

    runs: int = 0
    seconds: float = 0.0
    freed: int = 0
    """Unreachable objects found (cycles), over all runs."""

    def collect(self) -> None:
        """One full collection now."""
        began = time.perf_counter()
        self.freed += gc.collect()
        self.seconds += time.perf_counter() - began
        self.runs += 1


@contextlib.contextmanager
def paused() -> Iterator[None]:
    """Automatic collection off within; the collector as it was after (on again unless it was off
    before)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@contextlib.asynccontextmanager
async def clocked(collections: Collections, every_s: float = EVERY_S) -> AsyncIterator[None]:
    """Automatic collection off within, one full collection every `every_s` seconds instead;
    the collector as it was after (`paused`)."""

    async def collecting() -> None:
        while True:
            await asyncio.sleep(every_s)
            collections.collect()

    with paused():
        task = asyncio.ensure_future(collecting())
        try:
            yield
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
