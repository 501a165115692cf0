"""Base64url without padding, the text of keys and signatures (RFC 4648 section 5)."""

from __future__ import annotations

import base64
import binascii


def text(data: bytes) -> str:
    """Bytes as base64url without padding."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def data(text_: str) -> bytes:
    """The bytes of a base64url text without padding (ValueError if it is not one)."""
    if "=" in text_:
        raise ValueError("base64url here is written without padding")
    try:
        return base64.urlsafe_b64decode(text_ + "=" * (-len(text_) % 4))
    except (binascii.Error, ValueError) as error:
        raise ValueError(f"not base64url: {error}") from None
