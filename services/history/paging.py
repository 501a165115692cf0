"""The opaque cursor of a player's history: the sort key of the last bet of a page."""

from __future__ import annotations

import base64
import binascii

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
