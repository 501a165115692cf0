"""The projector's cyclic collector on a clock: off by allocation, on by time, restored after."""

from __future__ import annotations

import asyncio
import gc
import weakref

from services.collector import Collections, clocked


class Node:
    """An object that can be in a cycle and be watched by a weak reference."""

    def __init__(self) -> None:
        self.other: Node | None = None


def a_cycle() -> weakref.ref[Node]:
    """Two objects referring to each other and to nothing else: only the collector frees them."""
    first, second = Node(), Node()
    first.other, second.other = second, first
    return weakref.ref(first)


def test_within_it_allocations_do_not_collect_and_after_it_they_do_again() -> None:
    async def inside() -> tuple[bool, bool]:
        async with clocked(Collections(), every_s=3600):
            watched = a_cycle()
            for _ in range(50_000):  # far past any generation's threshold
                Node()
            return gc.isenabled(), watched() is not None

    gc.enable()  # as a process starts (whatever a test before left)
    enabled_inside, cycle_kept = asyncio.run(inside())
    assert not enabled_inside
    assert cycle_kept  # nothing collected it while inside
    assert gc.isenabled()


def test_a_collector_that_was_off_stays_off_after_it() -> None:
    gc.disable()
    try:

        async def inside() -> None:
            async with clocked(Collections(), every_s=3600):
                pass

        asyncio.run(inside())
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_cycle_is_freed_by_the_next_collection_on_the_clock_and_counted() -> None:
    collections = Collections()

    async def inside() -> tuple[bool, bool]:
        async with clocked(collections, every_s=0.05):
            watched = a_cycle()
            kept = watched() is not None
            for _ in range(100):  # at most five seconds
                await asyncio.sleep(0.05)
                if watched() is None:
                    break
            return kept, watched() is None

    kept_at_first, freed = asyncio.run(inside())
    assert kept_at_first and freed
    assert collections.runs >= 1
    assert collections.freed >= 2  # both nodes (and their attribute dicts, where they have any)
    assert collections.seconds > 0


def test_one_collection_now_counts_what_it_freed() -> None:
    collections = Collections()
    gc.collect()
    watched = a_cycle()
    collections.collect()
    assert watched() is None
    assert collections.runs == 1
    assert collections.freed >= 2
