"""What an upstream event becomes on the wire: validated bytes, a topic and a key (pure)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import msgspec

from schemas.codec import Invalid, Topic, decode_event
from schemas.events import AnyEvent

_ENCODER: Final = msgspec.json.Encoder()


class InvalidEvent(ValueError):
    """An event the schemas refuse: it is never sent. `reason` is the contract's code."""

    def __init__(self, reason: str, detail: str, raw: bytes) -> None:
        super().__init__(f"invalid event ({reason}): {detail}")
        self.reason = reason
        self.detail = detail
        self.raw = raw


@dataclass(frozen=True, slots=True, kw_only=True)
class Message:
    """A valid event ready to send: its topic role, its key (the table id) and its exact bytes."""

    topic: Topic
    key: bytes
    value: bytes
    event_id: str


def prepare(event: AnyEvent | bytes) -> Message:
    """Validate an event (a Struct, or the JSON bytes to send verbatim) with the schemas' decoders.

    Raises InvalidEvent naming the reason and the field; the bytes of a valid raw event are kept
    exactly, so a retry sends the very same bytes.
    """
    raw = event if isinstance(event, bytes) else _ENCODER.encode(event)
    topic, decoded = decode_event(raw)
    if isinstance(decoded, Invalid):
        raise InvalidEvent(decoded.reason, decoded.detail, raw)
    return Message(topic=topic, key=decoded.table_id.encode(), value=raw, event_id=decoded.event_id)
