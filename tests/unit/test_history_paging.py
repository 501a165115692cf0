"""The cursor of a player's history: it names a bet's sort key, and forged ones are refused."""

from __future__ import annotations

import pytest

from services.history.paging import BadCursor, decode_cursor, encode_cursor
from services.history.views import Key


def test_a_cursor_round_trips_its_key() -> None:
    key: Key = (123, "T é", "R/1", 4, 'b"x')
    assert decode_cursor(encode_cursor(key)) == key


@pytest.mark.parametrize(
    "forged", ["x", "!!!", "W10", "WzEsMiwzXQ", "é", encode_cursor((1, "a", "b", 1, "c"))[:-2]]
)
def test_a_cursor_not_handed_out_is_refused(forged: str) -> None:
    with pytest.raises(BadCursor):
        decode_cursor(forged)
