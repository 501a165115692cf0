"""Test support for the API's access control: fixed signing keys, their JWKS, and tokens of any
claims and header (expired, not yet valid, forged, for another audience, ...)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt import PyJWK

from services.history.issuer import SigningKey, public_jwk
from services.history.tokens import key_set, pick
from services.signing.keys import private_key

ED = private_key(bytes(range(100, 132)))
"""The issuer's Ed25519 key (fixed seed)."""
ED_NEXT = private_key(bytes(range(132, 164)))
"""The Ed25519 key it rotates to."""
FORGER = private_key(b"\x66" * 32)
"""A key nobody published."""
RSA = rsa.generate_private_key(public_exponent=65537, key_size=2048)
"""An RSA key (RS256)."""
BOTH = "history:read report:read"


def kid(key: SigningKey) -> str:
    return str(public_jwk(key)["kid"])


def jwks(*keys: SigningKey) -> dict[str, Any]:
    return {"keys": [public_jwk(key) for key in keys]}


def write_jwks(path: Path, *keys: SigningKey) -> Path:
    path.write_text(json.dumps(jwks(*keys)))
    return path


def token(
    key: SigningKey = ED,
    *,
    scope: str | None = BOTH,
    audience: str | None = "croupier",
    expires_in: int | None = 600,
    valid_in: int = 0,
    header_kid: str | None = None,
    **extra: Any,
) -> str:
    """A token signed by `key`, naming `header_kid` (default: the key's own kid), valid from
    `valid_in` seconds from now until `expires_in` seconds from now (None: no `exp`)."""
    now = int(time.time())
    claims: dict[str, Any] = {"sub": "tester", "iat": now + min(valid_in, 0), "nbf": now + valid_in}
    if scope is not None:
        claims["scope"] = scope
    if audience is not None:
        claims["aud"] = audience
    if expires_in is not None:
        claims["exp"] = now + expires_in
    claims |= extra
    algorithm = "RS256" if isinstance(key, rsa.RSAPrivateKey) else "EdDSA"
    return jwt.encode(claims, key, algorithm=algorithm, headers={"kid": header_kid or kid(key)})


def bearer(value: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {value}"}


class HeldKeys:
    """A key source holding fixed keys (the API's tests of routes, not of where keys come from)."""

    def __init__(self, *keys: SigningKey) -> None:
        self.keys = key_set(json.dumps(jwks(*keys)))

    async def find(self, kid: str | None) -> PyJWK | None:
        return pick(self.keys, kid)

    async def close(self) -> None:
        return None
