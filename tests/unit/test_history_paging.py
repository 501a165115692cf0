"""Pages of a player's history: newest first, by cursor or offset, stable while bets arrive."""

from __future__ import annotations

import pytest

from services.history.paging import BadCursor, decode_cursor, encode_cursor, page
from services.history.views import Key


def history(n: int) -> list[Key]:
    """n bets of one player, one per second, oldest first."""
    return [(1_000_000 * i, "T1", f"R{i:03d}", 1, f"b{i:03d}") for i in range(n)]


def walk(keys: list[Key], limit: int) -> list[list[str]]:
    pages, after = [], None
    while True:
        chosen = page(keys, limit=limit, after=after)
        pages.append([key[-1] for key in chosen.keys])
        if chosen.next_cursor is None:
            return pages
        after = decode_cursor(chosen.next_cursor)


def test_cursor_pages_walk_the_whole_history_newest_first_once() -> None:
    pages = walk(history(7), limit=3)
    assert pages == [["b006", "b005", "b004"], ["b003", "b002", "b001"], ["b000"]]


def test_the_last_full_page_has_no_next_cursor() -> None:
    assert walk(history(6), limit=3) == [["b005", "b004", "b003"], ["b002", "b001", "b000"]]


def test_a_bet_arriving_between_two_pages_does_not_shift_the_next_page() -> None:
    keys = history(5)
    first = page(keys, limit=2)
    assert first.next_cursor is not None
    keys.append((99_000_000, "T1", "R099", 1, "new"))
    second = page(keys, limit=2, after=decode_cursor(first.next_cursor))
    assert [key[-1] for key in first.keys + second.keys] == ["b004", "b003", "b002", "b001"]


def test_offset_skips_the_newest_bets() -> None:
    chosen = page(history(5), limit=2, offset=3)
    assert [key[-1] for key in chosen.keys] == ["b001", "b000"]
    assert chosen.next_cursor is None
    assert page(history(5), limit=2, offset=9).keys == []


def test_a_cursor_round_trips_its_key() -> None:
    key: Key = (123, "T é", "R/1", 4, 'b"x')
    assert decode_cursor(encode_cursor(key)) == key


@pytest.mark.parametrize(
    "forged", ["x", "!!!", "W10", "WzEsMiwzXQ", "é", encode_cursor((1, "a", "b", 1, "c"))[:-2]]
)
def test_a_cursor_not_handed_out_is_refused(forged: str) -> None:
    with pytest.raises(BadCursor):
        decode_cursor(forged)
