"""A local token issuer, for `make run` and an operator's own tests: a signing key, its JWKS, and
tokens it signs. Production tokens come from the operator's identity provider instead.

The key is a PEM private key (Ed25519, or RSA for RS256); its `kid` is its RFC 7638 thumbprint,
so the same key always has the same id.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import jwt
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.asymmetric.rsa import RSAPrivateKey
from cryptography.hazmat.primitives.serialization import (
    Encoding,
    NoEncryption,
    PrivateFormat,
    load_pem_private_key,
)
from jwt.algorithms import OKPAlgorithm, RSAAlgorithm

from services.security.local import write_private
from services.signing.base64url import text

SigningKey = Ed25519PrivateKey | RSAPrivateKey
LOCAL_DIR: Final = ".data/auth"
KEY_FILE: Final = "signing-key.pem"
JWKS_FILE: Final = "jwks.json"
_THUMBPRINTED: Final = {"OKP": ("crv", "kty", "x"), "RSA": ("e", "kty", "n")}


class IssuerKeyError(ValueError):
    """A signing key file that cannot be used, and why."""


def algorithm_of(key: SigningKey) -> str:
    return "EdDSA" if isinstance(key, Ed25519PrivateKey) else "RS256"


def public_jwk(key: SigningKey) -> dict[str, Any]:
    """The public JWK of the key, with its `kid` (RFC 7638 thumbprint), `alg` and `use`."""
    found: dict[str, Any] = (
        OKPAlgorithm.to_jwk(key.public_key(), as_dict=True)
        if isinstance(key, Ed25519PrivateKey)
        else RSAAlgorithm.to_jwk(key.public_key(), as_dict=True)
    )
    members = {name: found[name] for name in _THUMBPRINTED[found["kty"]]}
    canonical = json.dumps(members, separators=(",", ":"), sort_keys=True).encode()
    kid = text(hashlib.sha256(canonical).digest())
    return {**members, "kid": kid, "alg": algorithm_of(key), "use": "sig"}


def claims(
    *, scopes: list[str], audience: str, subject: str, now: int, lifetime: int
) -> dict[str, Any]:
    """An access token's claims: `scope` space-separated (OAuth 2), valid from `now` (seconds
    since the epoch) for `lifetime` seconds."""
    return {
        "sub": subject,
        "aud": audience,
        "scope": " ".join(scopes),
        "iat": now,
        "nbf": now,
        "exp": now + lifetime,
    }


def mint(key: SigningKey, body: dict[str, Any]) -> str:
    """The token of these claims, signed by `key` and naming its `kid`."""
    kid = public_jwk(key)["kid"]
    return jwt.encode(body, key, algorithm=algorithm_of(key), headers={"kid": kid})


def read_key(path: str | Path) -> SigningKey:
    """A PEM private key file (unencrypted): Ed25519 or RSA."""
    try:
        key = load_pem_private_key(Path(path).read_bytes(), password=None)
    except ValueError as error:
        raise IssuerKeyError(f"{path}: not an unencrypted PEM private key ({error})") from None
    if not isinstance(key, Ed25519PrivateKey | RSAPrivateKey):
        raise IssuerKeyError(f"{path}: an Ed25519 or RSA key is needed")
    return key


@dataclass(frozen=True, kw_only=True)
class Local:
    """The local issuer's key and the JWKS the API checks its tokens with."""

    key: SigningKey
    key_file: Path
    jwks_file: Path


def local(directory: str | Path = LOCAL_DIR) -> Local:
    """The local Ed25519 key and its JWKS in `directory`, made the first time (the key 0600) and
    reused after; the JWKS is written again when it does not hold the key."""
    folder = Path(directory)
    folder.mkdir(parents=True, exist_ok=True)
    key_file, jwks_file = folder / KEY_FILE, folder / JWKS_FILE
    if not key_file.exists():
        pem = Ed25519PrivateKey.generate().private_bytes(
            Encoding.PEM, PrivateFormat.PKCS8, NoEncryption()
        )
        write_private(key_file, pem)
    key = read_key(key_file)
    wanted = {"keys": [public_jwk(key)]}
    try:
        held = json.loads(jwks_file.read_text())
    except (OSError, ValueError):
        held = None
    if held != wanted:
        jwks_file.write_text(json.dumps(wanted, indent=2) + "\n")
    return Local(key=key, key_file=key_file, jwks_file=jwks_file)
