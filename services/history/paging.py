"""The opaque cursor of a player's history: the sort key of the last bet of a page."""

from __future__ import annotations

import base64
import binascii
from typing import Annotated

import msgspec

from schemas.events import SEQ_MAX
from services.history.views import Key

_MICROS = Annotated[int, msgspec.Meta(ge=-(2**63), le=2**63 - 1)]
_SEQ = Annotated[int, msgspec.Meta(ge=0, le=SEQ_MAX)]
_KEY = msgspec.json.Decoder(tuple[_MICROS, str, str, _SEQ, str])
"""A key as `encode_cursor` makes one: microseconds, ids and a seq the database can hold."""


class BadCursor(ValueError):
    """A cursor this service did not hand out."""


def encode_cursor(key: Key) -> str:
    """The opaque cursor that continues a history after the bet of this key."""
    return base64.urlsafe_b64encode(msgspec.json.encode(key)).decode().rstrip("=")


def decode_cursor(cursor: str) -> Key:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        key = _KEY.decode(raw)
        if any("\x00" in text for text in (key[1], key[2], key[4])):
            raise ValueError("an id holding U+0000 (NUL)")
        return key
    except (binascii.Error, ValueError, msgspec.DecodeError) as error:
        raise BadCursor(f"cursor {cursor[:40]!r} was not handed out by this service") from error
