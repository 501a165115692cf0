"""The table keys file: the Ed25519 public keys croupier checks each signing table's events with."""

from __future__ import annotations

from typing import Annotated, Final, Literal

import msgspec

from schemas.events import Id

KEY_PATTERN: Final = "^[A-Za-z0-9_-]{43}$"

PublicKeyText = Annotated[
    str,
    msgspec.Meta(
        pattern=KEY_PATTERN,
        description="An Ed25519 public key: its 32 bytes in base64url without padding (43 "
        "characters), as the `x` of an OKP JSON Web Key (RFC 8037).",
    ),
]


class TableKeysFile(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Per signing table, every public key that may sign its money-moving round events.

    Several keys while one is rotated; a table not listed is read without signatures.
    """

    v: Literal[1] = 1
    tables: dict[Id, Annotated[list[PublicKeyText], msgspec.Meta(min_length=1)]] = msgspec.field(
        default_factory=dict
    )


class PrivateKeyFile(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A table's signing key as `croupier keys new` writes it (mode 0600): keep it secret."""

    v: Literal[1] = 1
    table_id: Id
    private_key: Annotated[str, msgspec.Meta(pattern=KEY_PATTERN)]
    """The 32-byte Ed25519 seed, base64url without padding."""
    public_key: PublicKeyText
