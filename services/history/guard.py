"""The API's access control: an aiohttp middleware over `access.decide` (a thin shell).

A request to a protected route (`access.PROTECTED`) is served only with a bearer token that
verifies against the key source and grants the route's scope: else 401 or 403 with a
`WWW-Authenticate` challenge (RFC 6750) and the API's JSON error body. Other routes pass.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import assert_never

import msgspec
from aiohttp import web
from aiohttp.typedefs import Middleware

from services.history.access import (
    PROTECTED,
    Allowed,
    Forbidden,
    NoToken,
    Rejected,
    Unauthenticated,
    Verdict,
    challenge,
    decide,
    refusal,
    token_of,
)
from services.history.jwks import KeySource, KeysUnavailable
from services.history.models import ErrorOut
from services.history.tokens import key_id, verify

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@dataclass(frozen=True, kw_only=True)
class TokenChecks:
    """What a token must satisfy: signed by a key of `keys`, for `audience` (and `issuer` when
    set), current within `leeway` seconds."""

    keys: KeySource
    audience: str = "croupier"
    issuer: str | None = None
    leeway: float = 30.0


async def verdict(checks: TokenChecks, authorization: str | None) -> Verdict:
    """The request's token: none, refused (and why), or verified with its claims."""
    token = token_of(authorization)
    if token is None:
        return NoToken()
    kid = key_id(token)
    if isinstance(kid, Rejected):
        return kid
    key = await checks.keys.find(kid)
    if key is None:
        return Rejected(reason="unknown signing key (kid)")
    return verify(token, key, audience=checks.audience, issuer=checks.issuer, leeway=checks.leeway)


def _error(status: int, error: str, detail: str) -> web.Response:
    body = msgspec.json.encode(ErrorOut(error=error, detail=detail))
    return web.Response(body=body, status=status, content_type="application/json")


def guard(checks: TokenChecks) -> Middleware:
    """The middleware that checks the token of every protected route."""

    @web.middleware
    async def _guard(request: web.Request, handler: Handler) -> web.StreamResponse:
        resource = request.match_info.route.resource
        needed = PROTECTED.get(resource.canonical) if resource is not None else None
        if needed is None:
            return await handler(request)
        try:
            found = await verdict(checks, request.headers.get("Authorization"))
        except KeysUnavailable as error:
            return _error(503, "unavailable", f"tokens cannot be checked now: {error}")
        decision = decide(found, needed)
        match decision:
            case Allowed():
                return await handler(request)
            case Unauthenticated() | Forbidden():
                status, code, detail = refusal(decision)
                answer = _error(status, code, detail)
                answer.headers["WWW-Authenticate"] = challenge(decision)
                return answer
            case _:
                assert_never(decision)

    return _guard
