"""Signing a money-moving round event and checking it against its table's keys (pure)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, TypeAlias, TypeVar

from msgspec.structs import replace

from schemas.events import SignedEvent, type_of
from services.signing.base64url import data, text
from services.signing.message import message

if TYPE_CHECKING:  # `cryptography` (OpenSSL, some 10 MiB resident) loads with the first key
    from cryptography.hazmat.primitives.asymmetric.ed25519 import (
        Ed25519PrivateKey,
        Ed25519PublicKey,
    )

TableKeys: TypeAlias = "Mapping[str, tuple[Ed25519PublicKey, ...]]"
"""The public keys of each signing table; a table not in it is read without signatures."""
NO_KEYS: Final[TableKeys] = {}

_SIG: Final = re.compile(r"[A-Za-z0-9_-]{86}")
"""64 bytes in base64url without padding."""
E = TypeVar("E", bound=SignedEvent)


@dataclass(frozen=True, slots=True)
class Verified:
    """The signature is the table's: `key` is the index of the key that verified it."""

    key: int


@dataclass(frozen=True, slots=True)
class Unverified:
    """No valid signature: `missing`, `undecodable` or `unknown` (no key of the table verifies)."""

    why: str
    detail: str


Verdict = Verified | Unverified


def sign(key: Ed25519PrivateKey, event: SignedEvent) -> str:
    """The `sig` of an event: its message signed, in base64url without padding."""
    return text(key.sign(message(event)))


def signed(key: Ed25519PrivateKey, event: E) -> E:
    """The event with its `sig`."""
    return replace(event, sig=sign(key, event))


def with_sig(raw: bytes, sig: str) -> bytes:
    """The JSON text of an event with `"sig"` added as its last member, all else byte for byte."""
    body = raw.rstrip()
    if not body.endswith(b"}"):
        raise ValueError("not a JSON object: cannot add a sig")
    return body[:-1] + b',"sig":"' + sig.encode() + b'"}'


def verify(keys: Sequence[Ed25519PublicKey], event: SignedEvent) -> Verdict:
    """Whether some key of the event's table verifies its `sig` (tried in the file's order)."""
    sig = event.sig
    what = f"{type_of(event)} of table {event.table_id!r}"
    if sig is None:
        return Unverified(
            "missing",
            f"sig: missing; table {event.table_id!r} signs its money-moving round events "
            "(the table keys file lists its keys), so an unsigned one changes nothing",
        )
    if not isinstance(sig, str) or not _SIG.fullmatch(sig):
        return Unverified(
            "undecodable",
            f"sig: not an Ed25519 signature in base64url without padding (86 characters of "
            f"A-Z a-z 0-9 - _) on this {what}",
        )
    from cryptography.exceptions import InvalidSignature  # loaded already: keys exist

    signature = data(sig)
    signed_bytes = message(event)
    for n, key in enumerate(keys):
        try:
            key.verify(signature, signed_bytes)
        except InvalidSignature:
            continue
        return Verified(n)
    count = f"{len(keys)} key" + ("" if len(keys) == 1 else "s")
    return Unverified(
        "unknown",
        f"sig: verified by none of the {count} of table {event.table_id!r}: signed by another "
        "key, or a signed field changed after signing",
    )
