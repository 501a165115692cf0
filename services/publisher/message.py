"""What an upstream event becomes on the wire: validated bytes, a topic and a key (pure)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

import msgspec
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from schemas.codec import Invalid, Topic, decode_event
from schemas.events import SIGNED, AnyEvent
from services.signing.signature import sign, signed, with_sig

_ENCODER: Final = msgspec.json.Encoder()
_ANY: Final = msgspec.json.Decoder()
Signers = Mapping[str, Ed25519PrivateKey]
"""The private key of each table whose money-moving round events the publisher signs."""


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


def prepare(event: AnyEvent | bytes, signers: Signers | None = None) -> Message:
    """Validate an event (a Struct, or the JSON bytes to send verbatim) with the schemas' decoders.

    Raises InvalidEvent naming the reason and the field; the bytes of a valid raw event are kept
    exactly, so a retry sends the very same bytes. A money-moving round event without `sig` of a
    table in `signers` is signed first (raw bytes get `"sig"` added as their last member).
    """
    if signers and isinstance(event, SIGNED) and event.sig is None:
        key = signers.get(event.table_id)
        if key is not None:
            event = signed(key, event)
    raw = event if isinstance(event, bytes) else _ENCODER.encode(event)
    topic, decoded = decode_event(raw)
    if isinstance(decoded, Invalid):
        raise InvalidEvent(decoded.reason, decoded.detail, raw)
    if signers and isinstance(decoded, SIGNED) and decoded.sig is None:
        key = signers.get(decoded.table_id)
        if key is not None:
            if "sig" in _ANY.decode(raw):
                raise InvalidEvent(
                    "invalid_field",
                    "sig: null; remove the member to have the event signed with the table's key",
                    raw,
                )
            raw = with_sig(raw, sign(key, decoded))
    return Message(topic=topic, key=decoded.table_id.encode(), value=raw, event_id=decoded.event_id)
