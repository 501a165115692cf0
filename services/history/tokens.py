"""Bearer tokens (JWT): a JSON Web Key Set's usable keys, and a token verified against one of them.

PyJWT does the verifying (signature, `aud`, `iss`, `exp`, `nbf`, `iat` with a leeway); this module
only chooses the key and says in a few words why a token was refused. No I/O.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Final

import jwt
from jwt import PyJWK

from services.history.access import Rejected, Verified

ALGORITHMS: Final = ("EdDSA", "RS256")
"""The signature algorithms accepted: Ed25519 and RSA PKCS#1 v1.5 with SHA-256."""

Keys = Mapping[str, PyJWK]
"""Usable keys by `kid` ("" for a key published without one)."""


class JwksError(ValueError):
    """A JSON Web Key Set that cannot be used, and why."""


def key_set(document: bytes | str) -> Keys:
    """The keys of a JWKS document that can verify an accepted algorithm: RSA and Ed25519
    signing keys (others, and those marked for encryption, are left out)."""
    try:
        found = json.loads(document)
    except ValueError as error:
        raise JwksError(f"not JSON ({error})") from None
    if not isinstance(found, dict) or not isinstance(found.get("keys"), list):
        raise JwksError('not a JSON Web Key Set (an object with a "keys" list)')
    keys: dict[str, PyJWK] = {}
    for entry in found["keys"]:
        if not isinstance(entry, dict) or entry.get("use", "sig") != "sig":
            continue
        try:
            key = PyJWK(entry)
        except jwt.PyJWTError:
            continue
        if key.algorithm_name in ALGORITHMS:
            keys[str(entry.get("kid", ""))] = key
    if not keys:
        raise JwksError(f"no usable signing key ({' or '.join(ALGORITHMS)})")
    return keys


def key_id(token: str) -> str | Rejected | None:
    """The `kid` of the token's header (None: it names none), or why the header is refused."""
    try:
        header = jwt.get_unverified_header(token)
    except jwt.PyJWTError:
        return Rejected(reason="malformed token")
    alg, kid = header.get("alg"), header.get("kid")
    if alg is None:
        return Rejected(reason="malformed token")
    if alg not in ALGORITHMS:
        return Rejected(reason=f"algorithm {str(alg)[:20]} is not accepted")
    if kid is not None and not isinstance(kid, str):
        return Rejected(reason="malformed token (kid)")
    return kid


def pick(keys: Keys, kid: str | None) -> PyJWK | None:
    """The key the token names; a token naming none may use the set's only key."""
    if kid is None:
        return next(iter(keys.values())) if len(keys) == 1 else None
    return keys.get(kid)


def verify(
    token: str, key: PyJWK, *, audience: str, issuer: str | None, leeway: float
) -> Verified | Rejected:
    """The claims of a token signed by `key`, for `audience`, current within `leeway` seconds."""
    try:
        claims = jwt.decode(
            token,
            key,
            algorithms=list(ALGORITHMS),
            audience=audience,
            issuer=issuer,
            leeway=leeway,
            options={"require": ["exp"]},
        )
    except jwt.ExpiredSignatureError:
        return Rejected(reason="token expired")
    except jwt.ImmatureSignatureError:
        return Rejected(reason="token not yet valid")
    except jwt.InvalidAudienceError:
        return Rejected(reason=f"token audience is not {audience}")
    except jwt.InvalidIssuerError:
        return Rejected(reason="token issuer is not the one trusted")
    except jwt.MissingRequiredClaimError as missing:
        return Rejected(reason=f"token has no {missing.claim} claim")
    except jwt.InvalidSignatureError:
        return Rejected(reason="signature does not verify")
    except jwt.InvalidAlgorithmError:
        return Rejected(reason="algorithm does not match the key")
    except jwt.PyJWTError:
        return Rejected(reason="malformed token")
    return Verified(claims=claims)
