"""Fixed test keys and signed events for the signature tests (keys from fixed 32-byte seeds)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from schemas.codec import decode_round
from schemas.events import SIGNED, SignedEvent
from services.signing.keys import private_key
from services.signing.signature import sign, with_sig
from tests.unit.builders import round_event

KEY_T1 = private_key(bytes(range(32)))
"""Table T1's key (seed 00 01 02 ... 1f)."""
KEY_T1_NEXT = private_key(bytes(range(32, 64)))
"""T1's next key, during a rotation."""
KEY_T2 = private_key(b"\x07" * 32)
"""Another table's key."""


def decoded(raw: bytes) -> SignedEvent:
    event = decode_round(raw)
    assert isinstance(event, SIGNED), event
    return event


def signed_event(
    kind: str, round_id: str = "R1", table_id: str = "T1", key: Any = KEY_T1, **fields: Any
) -> bytes:
    """A round event of `kind` with the sig `key` makes of it."""
    raw = round_event(kind, round_id, table_id, **fields)
    return with_sig(raw, sign(key, decoded(raw)))


def resigned(raw: bytes, **changes: Any) -> bytes:
    """The JSON of a signed event with some fields changed, its sig kept as it was."""
    body = msgspec.json.decode(raw)
    body.update(changes)
    return msgspec.json.encode(body)


def sign_all(lines: list[bytes], signers: Mapping[str, Ed25519PrivateKey]) -> list[bytes]:
    """The lines with every money-moving round event of a table in `signers` signed; the other
    lines (bets, other round events, unreadable lines, other tables) as they were."""
    out = []
    for raw in lines:
        event = decode_round(raw)
        if isinstance(event, SIGNED) and event.sig is None and event.table_id in signers:
            raw = with_sig(raw, sign(signers[event.table_id], event))
        out.append(raw)
    return out
