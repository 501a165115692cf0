"""Pages of a player's history from the database: newest first, by cursor or offset, stable."""

from __future__ import annotations

import random

from sqlalchemy import Engine

from services.history.paging import decode_cursor
from services.history.projection import Changes
from services.history.queries import Reads
from services.history.store import Store
from tests.committed import commit_inputs
from tests.database import project
from tests.unit.builders import bet, round_event


def placed(n: int, first: int = 0) -> list[tuple[str, bytes]]:
    """n bets of alice in an open round, one a second, oldest first."""
    return [
        ("bets", bet(i, at=f"2026-11-29T12:{i // 60:02d}:{i % 60:02d}Z", bet_id=f"b{i:03d}"))
        for i in range(first + 1, first + n + 1)
    ]


def fill(engine: Engine, inputs: list[tuple[str, bytes]]) -> Reads:
    committed = commit_inputs([("rounds", round_event("opened", game="sicbo")), *inputs])
    messages = [(s, raw, ts) for s, items in committed.topics.items() for raw, ts in items]
    project(Store(engine), messages, random.Random(1))
    return Reads(engine)


def walk(reads: Reads, limit: int) -> list[list[str]]:
    pages, after = [], None
    while True:
        page = reads.history("alice", limit=limit, after=after)
        assert page is not None
        pages.append([b.bet_id for b in page.bets])
        if page.next_cursor is None:
            return pages
        after = decode_cursor(page.next_cursor)


def test_cursor_pages_walk_the_whole_history_newest_first_once(engine: Engine) -> None:
    pages = walk(fill(engine, placed(7)), limit=3)
    assert pages == [["b007", "b006", "b005"], ["b004", "b003", "b002"], ["b001"]]


def test_the_last_full_page_has_no_next_cursor(engine: Engine) -> None:
    pages = walk(fill(engine, placed(6)), limit=3)
    assert pages == [["b006", "b005", "b004"], ["b003", "b002", "b001"]]


def test_a_bet_arriving_between_two_pages_does_not_shift_the_next_page(engine: Engine) -> None:
    reads = fill(engine, placed(5))
    first = reads.history("alice", limit=2)
    assert first is not None and first.next_cursor is not None
    store = Store(engine)
    late = commit_inputs(placed(1, first=50))
    [(raw, ts)] = late.topics["accepted"]
    stored = store.positions()
    changes = Changes()
    changes.feed("accepted", raw, ts)
    at = stored[("accepted", 0)]
    store.write(changes, {("accepted", 0): (at, at + 1)})
    second = reads.history("alice", limit=2, after=decode_cursor(first.next_cursor))
    assert second is not None
    shown = [b.bet_id for b in first.bets + second.bets]
    assert shown == ["b005", "b004", "b003", "b002"]
    newest = reads.history("alice", limit=1)
    assert newest is not None and newest.bets[0].bet_id == "b051"


def test_offset_skips_the_newest_bets(engine: Engine) -> None:
    reads = fill(engine, placed(5))
    page = reads.history("alice", limit=2, offset=3)
    assert page is not None
    assert [b.bet_id for b in page.bets] == ["b002", "b001"]
    assert page.next_cursor is None
    beyond = reads.history("alice", limit=2, offset=9)
    assert beyond is not None and beyond.bets == [] and beyond.total == 5
