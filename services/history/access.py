"""Who may read what on the read side's HTTP API: a verified token's claims to a decision.

Pure: no HTTP, no keys, no clock. The shell (`guard.py`) verifies the token and answers.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, assert_never

import msgspec

HISTORY_READ: Final = "history:read"
REPORT_READ: Final = "report:read"
REALM: Final = "croupier"

PROTECTED: Final[Mapping[str, str]] = {
    "/players/{player_id}/bets": HISTORY_READ,
    "/tables/{table_id}/rounds/{round_id}": HISTORY_READ,
    "/report": REPORT_READ,
    "/integrity": REPORT_READ,
}
"""The scope each protected route needs; every other route (the boards, the front page, /tables,
a table's stats and distribution, /health, /metrics, /openapi.json) is public."""


class NoToken(msgspec.Struct, frozen=True, kw_only=True):
    """The request carries no bearer token."""


class Rejected(msgspec.Struct, frozen=True, kw_only=True):
    """A token was given and did not verify; `reason` says why, in a few words."""

    reason: str


class Verified(msgspec.Struct, frozen=True, kw_only=True):
    """A token whose signature, audience and times verified: its claims."""

    claims: Mapping[str, object]


Verdict = NoToken | Rejected | Verified


class Allowed(msgspec.Struct, frozen=True, kw_only=True):
    """Serve the request."""


class Unauthenticated(msgspec.Struct, frozen=True, kw_only=True):
    """401: no token (`invalid` False), or one that cannot be trusted."""

    invalid: bool
    reason: str


class Forbidden(msgspec.Struct, frozen=True, kw_only=True):
    """403: a good token without the scope the route needs."""

    scope: str


Decision = Allowed | Unauthenticated | Forbidden


def token_of(authorization: str | None) -> str | None:
    """The token of an `Authorization: Bearer <token>` header (the scheme in any case), or None
    when there is no such header; an empty token is "" (a token given, and malformed)."""
    if authorization is None:
        return None
    scheme, _, token = authorization.strip().partition(" ")
    if scheme.lower() != "bearer":
        return None
    return token.strip()


def scopes_of(claims: Mapping[str, object]) -> frozenset[str] | None:
    """The granted scopes: `scope`, a space-separated string (OAuth 2), and `scp`, a list of
    strings (or one such string); None when either claim has another shape."""
    found: set[str] = set()
    for name in ("scope", "scp"):
        match claims.get(name):
            case None:
                pass
            case str(text):
                found.update(text.split())
            case list(items) if name == "scp" and all(isinstance(x, str) for x in items):
                found.update(str(x) for x in items)
            case _:
                return None
    return frozenset(found)


def decide(verdict: Verdict, needed: str) -> Decision:
    """Allowed when the token verified and grants `needed`; else why not."""
    match verdict:
        case NoToken():
            return Unauthenticated(invalid=False, reason="a bearer token is required")
        case Rejected(reason=reason):
            return Unauthenticated(invalid=True, reason=reason)
        case Verified(claims=claims):
            granted = scopes_of(claims)
            if granted is None:
                return Unauthenticated(invalid=True, reason="the scope claim is malformed")
            return Allowed() if needed in granted else Forbidden(scope=needed)
        case _:
            assert_never(verdict)


def _quoted(text: str) -> str:
    """A quoted-string of RFC 6750's allowed characters (printable ASCII but `"` and `\\`)."""
    kept = "".join(c if " " <= c <= "~" and c not in '"\\' else "?" for c in text)
    return f'"{kept}"'


def challenge(decision: Unauthenticated | Forbidden) -> str:
    """The `WWW-Authenticate` header of a refusal (RFC 6750, section 3)."""
    match decision:
        case Unauthenticated(invalid=False):
            return f"Bearer realm={_quoted(REALM)}"
        case Unauthenticated(reason=reason):
            return (
                f"Bearer realm={_quoted(REALM)}, error={_quoted('invalid_token')}, "
                f"error_description={_quoted(reason)}"
            )
        case Forbidden(scope=scope):
            return (
                f"Bearer realm={_quoted(REALM)}, error={_quoted('insufficient_scope')}, "
                f"scope={_quoted(scope)}, "
                f"error_description={_quoted(f'the token does not grant {scope}')}"
            )
        case _:
            assert_never(decision)


def refusal(decision: Unauthenticated | Forbidden) -> tuple[int, str, str]:
    """Status, error code and detail of the JSON error body of a refusal."""
    match decision:
        case Unauthenticated(reason=reason):
            return 401, "unauthorized", reason
        case Forbidden(scope=scope):
            return 403, "forbidden", f"the token does not grant {scope}"
        case _:
            assert_never(decision)
