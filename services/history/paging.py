"""Pages of a player's history, newest first, by opaque cursor or by offset."""

from __future__ import annotations

import base64
import binascii
from bisect import bisect_left
from dataclasses import dataclass

import msgspec

from services.history.views import Key

_KEY = msgspec.json.Decoder(tuple[int, str, str, int, str])


class BadCursor(ValueError):
    """A cursor this service did not hand out."""


def encode_cursor(key: Key) -> str:
    """The opaque cursor that continues a history after the bet of this key."""
    return base64.urlsafe_b64encode(msgspec.json.encode(key)).decode().rstrip("=")


def decode_cursor(cursor: str) -> Key:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        return _KEY.decode(raw)
    except (binascii.Error, ValueError, msgspec.DecodeError) as error:
        raise BadCursor(f"cursor {cursor[:40]!r} was not handed out by this service") from error


@dataclass(frozen=True, kw_only=True)
class Page:
    """The keys of one page, newest first, and where the next page starts (None at the end)."""

    keys: list[Key]
    next_cursor: str | None


def page(keys: list[Key], *, limit: int, offset: int = 0, after: Key | None = None) -> Page:
    """`limit` keys from a history sorted oldest first, walking it newest first.

    With `after` (a decoded cursor) the page starts at the first bet older than that key, so a
    bet arriving between two requests never shifts the pages; otherwise it skips `offset` bets.
    """
    end = bisect_left(keys, after) if after is not None else max(0, len(keys) - offset)
    start = max(0, end - limit)
    chosen = keys[start:end][::-1]
    more = start > 0 and bool(chosen)
    return Page(keys=chosen, next_cursor=encode_cursor(chosen[-1]) if more else None)
