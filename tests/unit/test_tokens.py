"""Tokens verified with PyJWT against a JWKS's keys: EdDSA and RS256 accepted; forged, expired,
not yet valid, other audience, no `exp`, another algorithm refused, each saying why."""

from __future__ import annotations

import json
import re
import time

import jwt
import pytest

from services.history.access import Rejected, Verified
from services.history.issuer import claims, mint, public_jwk
from services.history.tokens import JwksError, key_id, key_set, pick, verify
from services.signing.base64url import data
from services.signing.keys import private_key
from tests.tokens import ED, ED_NEXT, FORGER, RSA, jwks, kid, token

KEYS = key_set(json.dumps(jwks(ED, RSA)))


def checked(value: str, *, leeway: float = 30, issuer: str | None = None) -> Verified | Rejected:
    found = key_id(value)
    assert not isinstance(found, Rejected), found
    key = pick(KEYS, found)
    assert key is not None
    return verify(value, key, audience="croupier", issuer=issuer, leeway=leeway)


def test_an_eddsa_token_of_a_published_key_verifies_with_its_claims() -> None:
    found = checked(token(ED, scope="history:read"))
    assert isinstance(found, Verified) and found.claims["scope"] == "history:read"


def test_an_rs256_token_of_a_published_key_verifies() -> None:
    found = checked(token(RSA, scope="report:read"))
    assert isinstance(found, Verified) and found.claims["aud"] == "croupier"


def test_a_token_signed_by_another_key_under_a_published_kid_is_forged() -> None:
    assert checked(token(FORGER, header_kid=kid(ED))) == Rejected(
        reason="signature does not verify"
    )


def test_an_expired_token_is_refused_past_the_leeway_only() -> None:
    assert checked(token(expires_in=-31)) == Rejected(reason="token expired")
    assert isinstance(checked(token(expires_in=-20)), Verified)
    assert checked(token(expires_in=-20), leeway=0) == Rejected(reason="token expired")


def test_a_token_not_valid_yet_is_refused_past_the_leeway_only() -> None:
    assert checked(token(valid_in=120)) == Rejected(reason="token not yet valid")
    assert isinstance(checked(token(valid_in=10)), Verified)


def test_a_token_for_another_audience_or_none_is_refused() -> None:
    assert checked(token(audience="wallet")) == Rejected(reason="token audience is not croupier")
    assert checked(token(audience=None)) == Rejected(reason="token has no aud claim")


def test_a_token_without_exp_is_refused() -> None:
    assert checked(token(expires_in=None)) == Rejected(reason="token has no exp claim")


def test_an_issuer_when_set_must_be_the_tokens() -> None:
    assert isinstance(checked(token(iss="https://idp"), issuer="https://idp"), Verified)
    assert checked(token(iss="https://other"), issuer="https://idp") == Rejected(
        reason="token issuer is not the one trusted"
    )


def test_an_unsigned_or_hmac_token_is_refused_by_its_header() -> None:
    now = int(time.time())
    body = {"aud": "croupier", "exp": now + 60, "scope": "history:read"}
    unsigned = jwt.encode(body, None, algorithm="none")
    hmac = jwt.encode(body, "a shared secret of thirty-two bytes!", algorithm="HS256")
    assert key_id(unsigned) == Rejected(reason="algorithm none is not accepted")
    assert key_id(hmac) == Rejected(reason="algorithm HS256 is not accepted")


@pytest.mark.parametrize("value", ["", "abc", "a.b.c", "e30.e30.", "Bearer x"])
def test_a_token_that_is_no_jwt_is_malformed(value: str) -> None:
    assert key_id(value) == Rejected(reason="malformed token")


def test_a_token_naming_no_kid_uses_the_only_key_of_a_set_of_one() -> None:
    alone = key_set(json.dumps(jwks(ED)))
    assert pick(alone, None) is not None and pick(KEYS, None) is None
    assert pick(KEYS, kid(ED_NEXT)) is None


def test_an_rsa_token_under_an_eddsa_kid_does_not_verify() -> None:
    found = checked(token(RSA, header_kid=kid(ED)))
    assert isinstance(found, Rejected)


def test_a_jwks_keeps_only_signing_keys_of_accepted_algorithms() -> None:
    entries = jwks(ED, RSA)["keys"]
    hmac = {"kty": "oct", "k": "c2VjcmV0", "kid": "h"}
    encryption = {**public_jwk(ED_NEXT), "use": "enc"}
    p256 = {
        "kty": "EC",
        "crv": "P-256",
        "kid": "ec",
        "x": "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU",
        "y": "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0",
    }
    found = key_set(json.dumps({"keys": [*entries, hmac, encryption, p256, "junk"]}))
    assert sorted(found) == sorted([kid(ED), kid(RSA)])


@pytest.mark.parametrize(
    ("document", "said"),
    [
        ("{", "not JSON"),
        ('{"keys": {}}', "not a JSON Web Key Set"),
        ("[]", "not a JSON Web Key Set"),
        ('{"keys": [{"kty": "oct", "k": "c2VjcmV0"}]}', "no usable signing key (EdDSA or RS256)"),
    ],
)
def test_a_jwks_without_a_usable_key_is_refused_saying_why(document: str, said: str) -> None:
    with pytest.raises(JwksError, match=re.escape(said)):
        key_set(document)


def test_a_keys_kid_is_its_rfc_7638_thumbprint() -> None:
    """RFC 8037, appendix A.3: the thumbprint of the example Ed25519 key."""
    example = private_key(data("nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A"))
    jwk = public_jwk(example)
    assert jwk["x"] == "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"
    assert jwk["kid"] == "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k"
    assert (jwk["alg"], jwk["use"]) == ("EdDSA", "sig")


def test_a_minted_token_verifies_with_the_scopes_and_lifetime_asked() -> None:
    now = int(time.time())
    body = claims(
        scopes=["history:read", "report:read"],
        audience="croupier",
        subject="ops",
        now=now,
        lifetime=30 * 86400,
    )
    for key in (ED, RSA):
        found = checked(mint(key, body))
        assert isinstance(found, Verified), found
        assert found.claims["scope"] == "history:read report:read"
        assert found.claims["exp"] == now + 30 * 86400
