"""The API's access decision, pure: a request's token (none, refused, verified claims) and the
route's scope to allowed, 401 with why, or 403 with the scope; and the RFC 6750 challenge."""

from __future__ import annotations

import pytest

from services.history.access import (
    HISTORY_READ,
    PROTECTED,
    REPORT_READ,
    Allowed,
    Forbidden,
    NoToken,
    Rejected,
    Unauthenticated,
    Verified,
    challenge,
    decide,
    refusal,
    scopes_of,
    token_of,
)


def test_only_histories_recalls_the_report_and_the_integrity_tests_are_protected() -> None:
    assert PROTECTED == {
        "/players/{player_id}/bets": HISTORY_READ,
        "/tables/{table_id}/rounds/{round_id}": HISTORY_READ,
        "/report": REPORT_READ,
        "/integrity": REPORT_READ,
    }


@pytest.mark.parametrize(
    ("header", "token"),
    [
        (None, None),
        ("Basic dXNlcjpwYXNz", None),
        ("Bearer abc.def.ghi", "abc.def.ghi"),
        ("bearer  abc.def.ghi ", "abc.def.ghi"),
        ("Bearer", ""),
    ],
)
def test_the_token_is_that_of_a_bearer_authorization_header(
    header: str | None, token: str | None
) -> None:
    assert token_of(header) == token


def test_scopes_come_from_the_space_separated_scope_claim_and_the_scp_list() -> None:
    assert scopes_of({"scope": "history:read  report:read"}) == {HISTORY_READ, REPORT_READ}
    assert scopes_of({"scp": ["history:read"]}) == {HISTORY_READ}
    assert scopes_of({"scp": "report:read", "scope": "history:read"}) == {
        HISTORY_READ,
        REPORT_READ,
    }
    assert scopes_of({}) == frozenset()


@pytest.mark.parametrize(
    "claims", [{"scope": ["history:read"]}, {"scp": [1]}, {"scope": 7}, {"scp": {"a": 1}}]
)
def test_a_scope_claim_of_another_shape_is_malformed(claims: dict[str, object]) -> None:
    assert scopes_of(claims) is None
    assert decide(Verified(claims=claims), HISTORY_READ) == Unauthenticated(
        invalid=True, reason="the scope claim is malformed"
    )


def test_no_token_is_a_401_without_an_error_code() -> None:
    decision = decide(NoToken(), HISTORY_READ)
    assert decision == Unauthenticated(invalid=False, reason="a bearer token is required")
    assert challenge(decision) == 'Bearer realm="croupier"'
    assert refusal(decision) == (401, "unauthorized", "a bearer token is required")


def test_a_refused_token_is_a_401_invalid_token_saying_why() -> None:
    decision = decide(Rejected(reason="token expired"), REPORT_READ)
    assert isinstance(decision, Unauthenticated)
    assert challenge(decision) == (
        'Bearer realm="croupier", error="invalid_token", error_description="token expired"'
    )
    assert refusal(decision) == (401, "unauthorized", "token expired")


def test_a_token_without_the_routes_scope_is_a_403_naming_it() -> None:
    decision = decide(Verified(claims={"scope": "history:read"}), REPORT_READ)
    assert decision == Forbidden(scope=REPORT_READ)
    assert challenge(decision) == (
        'Bearer realm="croupier", error="insufficient_scope", scope="report:read", '
        'error_description="the token does not grant report:read"'
    )
    assert refusal(decision)[:2] == (403, "forbidden")


def test_a_token_with_the_routes_scope_is_allowed() -> None:
    assert decide(Verified(claims={"scope": "history:read report:read"}), REPORT_READ) == Allowed()
    assert decide(Verified(claims={"scp": ["history:read"]}), HISTORY_READ) == Allowed()


def test_the_challenge_never_carries_a_quote_or_a_backslash_or_a_control_character() -> None:
    decision = Unauthenticated(invalid=True, reason='bad "alg" \\ \n é')
    assert challenge(decision).endswith('error_description="bad ?alg? ? ? ?"')
