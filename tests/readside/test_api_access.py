"""The read side's API in process with its access control: histories and recalls need a token
granting history:read, the report one granting report:read; every other route is public. Keys
from a JWKS file, or from a JWKS URL served by a local aiohttp server whose keys change."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer
from sqlalchemy import Engine

from services.history.api import application
from services.history.guard import TokenChecks
from services.history.jwks import FileKeys, KeySource, UrlKeys
from services.history.queries import Reads
from tests.database import migrated
from tests.readside.test_api_in_process import populate
from tests.tokens import ED, ED_NEXT, FORGER, RSA, bearer, jwks, kid, token, write_jwks

Answer = tuple[int, dict[str, str], Any]
PROTECTED = ("/players/alice/bets", "/tables/T1/rounds/R1", "/report")
PUBLIC = (
    "/",
    "/tables",
    "/tables/T1",
    "/tables/T1/stats",
    "/tables/T1/distribution",
    "/health",
    "/metrics",
    "/openapi.json",
)


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    """One SQLite read side with alice's and bob's bets (the access checks are the same on both
    databases; test_api_in_process runs the routes on each)."""
    with migrated("sqlite", tmp_path_factory.mktemp("access")) as engine:
        populate(engine)
        yield engine


async def _lag() -> int | None:
    return 0


def _decoded(raw: bytes, kind: str) -> Any:
    return msgspec.json.decode(raw) if kind.startswith("application/json") else raw


async def _ask(
    keys: KeySource | None, engine: Engine, calls: list[tuple[str, dict[str, str]]]
) -> list[Answer]:
    checks = None if keys is None else TokenChecks(keys=keys, leeway=30)
    app = application(Reads(engine), _lag, access=checks)
    answers = []
    async with TestClient(TestServer(app)) as client:
        for path, headers in calls:
            response = await client.get(path, headers=headers)
            body = _decoded(await response.read(), response.headers["Content-Type"])
            answers.append((response.status, dict(response.headers), body))
    return answers


def ask(engine: Engine, jwks_file: Path, *calls: tuple[str, dict[str, str]]) -> list[Answer]:
    return asyncio.run(_ask(FileKeys(jwks_file), engine, list(calls)))


@pytest.fixture
def published(tmp_path: Path) -> Path:
    """A JWKS file of the issuer's Ed25519 and RSA keys."""
    return write_jwks(tmp_path / "jwks.json", ED, RSA)


def test_without_a_token_histories_recalls_and_the_report_are_401_with_a_bearer_challenge(
    engine: Engine, published: Path
) -> None:
    for status, headers, body in ask(engine, published, *((p, {}) for p in PROTECTED)):
        assert status == 401
        assert headers["WWW-Authenticate"] == 'Bearer realm="croupier"'
        assert body == {
            "error": "unauthorized",
            "detail": "a bearer token is required",
            "problems": [],
        }


def test_public_routes_answer_without_a_token(engine: Engine, published: Path) -> None:
    answers = ask(engine, published, *((p, {}) for p in PUBLIC))
    assert [status for status, _, _ in answers] == [200] * len(PUBLIC)
    assert not any("WWW-Authenticate" in headers for _, headers, _ in answers)


@pytest.mark.parametrize(
    ("given", "reason"),
    [  # made when the test runs: a token made at collection may be valid by then
        (lambda: bearer(token(FORGER, header_kid=kid(ED))), "signature does not verify"),
        (lambda: bearer(token(expires_in=-120)), "token expired"),
        (lambda: bearer(token(valid_in=120)), "token not yet valid"),
        (lambda: bearer(token(audience="wallet")), "token audience is not croupier"),
        (lambda: bearer(token(ED_NEXT)), "unknown signing key (kid)"),
        (lambda: bearer("not-a-token"), "malformed token"),
        (lambda: {"Authorization": "Bearer "}, "malformed token"),
    ],
    ids=[
        "forged",
        "expired",
        "not-yet-valid",
        "wrong-audience",
        "unknown-kid",
        "malformed",
        "empty",
    ],
)
def test_a_bad_token_is_401_invalid_token_saying_why(
    engine: Engine, published: Path, given: Callable[[], dict[str, str]], reason: str
) -> None:
    [(status, headers, body)] = ask(engine, published, ("/players/alice/bets", given()))
    assert status == 401
    assert headers["WWW-Authenticate"] == (
        f'Bearer realm="croupier", error="invalid_token", error_description="{reason}"'
    )
    assert (body["error"], body["detail"]) == ("unauthorized", reason)


def test_a_token_without_the_routes_scope_is_403_insufficient_scope(
    engine: Engine, published: Path
) -> None:
    history, report = (
        bearer(token(scope="history:read")),
        bearer(token(scope=None, scp=["report:read"])),
    )
    answers = ask(
        engine,
        published,
        ("/report", history),
        ("/players/alice/bets", report),
        ("/tables/T1/rounds/R1", report),
    )
    assert [status for status, _, _ in answers] == [403, 403, 403]
    assert answers[0][1]["WWW-Authenticate"] == (
        'Bearer realm="croupier", error="insufficient_scope", scope="report:read", '
        'error_description="the token does not grant report:read"'
    )
    assert 'scope="history:read"' in answers[1][1]["WWW-Authenticate"]
    assert answers[2][2] == {
        "error": "forbidden",
        "detail": "the token does not grant history:read",
        "problems": [],
    }


def test_the_right_scope_is_served_for_eddsa_and_rs256_tokens(
    engine: Engine, published: Path
) -> None:
    for key in (ED, RSA):
        history, report = (
            bearer(token(key, scope="history:read")),
            bearer(token(key, scope="report:read")),
        )
        answers = ask(
            engine,
            published,
            ("/players/alice/bets", history),
            ("/tables/T1/rounds/R1", history),
            ("/report", report),
        )
        assert [status for status, _, _ in answers] == [200, 200, 200], answers
        assert answers[0][2]["total"] == 3 and answers[1][2]["round_id"] == "R1"


def test_unknown_ids_behind_a_good_token_are_still_404(engine: Engine, published: Path) -> None:
    [(status, _, body)] = ask(engine, published, ("/players/zed/bets", bearer(token())))
    assert status == 404 and body["error"] == "not_found"


def test_a_key_rotated_in_the_jwks_file_is_taken_and_the_old_one_refused(
    engine: Engine, tmp_path: Path
) -> None:
    """The file is replaced as an operator rotating a key would (write a new one, rename)."""
    jwks_file = write_jwks(tmp_path / "jwks.json", ED)
    old, new = bearer(token(ED)), bearer(token(ED_NEXT))

    async def go() -> list[Answer]:
        keys = FileKeys(jwks_file)
        before = await _ask(keys, engine, [("/players/alice/bets", old)])
        os.replace(write_jwks(tmp_path / "next.json", ED_NEXT), jwks_file)
        after = await _ask(
            keys, engine, [("/players/alice/bets", new), ("/players/alice/bets", old)]
        )
        return before + after

    statuses = [status for status, _, _ in asyncio.run(go())]
    assert statuses == [200, 200, 401]


class Issuer:
    """A local JWKS URL (aiohttp on 127.0.0.1) whose keys the test changes; counts its fetches."""

    def __init__(self, *keys: Any) -> None:
        self.document: dict[str, Any] | None = jwks(*keys)
        self.fetches = 0

    async def handle(self, request: web.Request) -> web.Response:
        self.fetches += 1
        if self.document is None:
            return web.Response(status=500, text="down")
        return web.json_response(self.document)

    async def serve(self, test: Callable[[str], Awaitable[None]]) -> None:
        site = web.Application()
        site.router.add_get("/jwks.json", self.handle)
        server = TestServer(site, host="127.0.0.1")
        await server.start_server()
        try:
            await test(str(server.make_url("/jwks.json")))
        finally:
            await server.close()


def statuses(answers: list[Answer]) -> list[int]:
    return [status for status, _, _ in answers]


def test_a_key_rotated_at_the_jwks_url_is_fetched_on_its_first_token_and_the_old_one_refused(
    engine: Engine,
) -> None:
    issuer = Issuer(ED)
    old, new = bearer(token(ED)), bearer(token(ED_NEXT))

    async def test(url: str) -> None:
        keys = UrlKeys(url, cooldown=0)
        assert statuses(await _ask(keys, engine, [("/report", old), ("/report", old)])) == [
            200,
            200,
        ]
        assert issuer.fetches == 1  # cached
        issuer.document = jwks(ED_NEXT)
        answers = await _ask(keys, engine, [("/report", new), ("/report", old)])
        assert statuses(answers) == [200, 401]
        assert "unknown signing key" in answers[1][1]["WWW-Authenticate"]

    asyncio.run(issuer.serve(test))


def test_the_jwks_url_is_fetched_again_once_its_keys_are_older_than_the_refresh(
    engine: Engine,
) -> None:
    """A removed key is refused once the cached set is stale, although no unknown kid came."""
    issuer = Issuer(ED, ED_NEXT)
    now = [1000.0]
    old = bearer(token(ED))

    async def test(url: str) -> None:
        keys = UrlKeys(url, refresh=300, cooldown=10, clock=lambda: now[0])
        assert statuses(await _ask(keys, engine, [("/report", old)])) == [200]
        issuer.document = jwks(ED_NEXT)
        now[0] += 299
        assert statuses(await _ask(keys, engine, [("/report", old)])) == [200]
        now[0] += 2
        assert statuses(await _ask(keys, engine, [("/report", old)])) == [401]
        assert issuer.fetches == 2

    asyncio.run(issuer.serve(test))


def test_a_jwks_url_that_fails_keeps_the_keys_held_and_with_none_answers_503(
    engine: Engine,
) -> None:
    issuer = Issuer(ED)
    now = [0.0]
    good = bearer(token(ED))

    async def test(url: str) -> None:
        keys = UrlKeys(url, refresh=300, cooldown=10, clock=lambda: now[0])
        assert statuses(await _ask(keys, engine, [("/report", good)])) == [200]
        issuer.document = None
        now[0] += 400
        assert statuses(await _ask(keys, engine, [("/report", good)])) == [200]
        assert issuer.fetches == 2
        fresh = UrlKeys(url, refresh=300, cooldown=10, clock=lambda: now[0])
        [(status, _, body)] = await _ask(fresh, engine, [("/report", good)])
        assert status == 503 and body["error"] == "unavailable"
        assert statuses(await _ask(fresh, engine, [("/tables", {})])) == [200]

    asyncio.run(issuer.serve(test))


def test_with_auth_off_every_route_answers_without_a_token(engine: Engine) -> None:
    answers = asyncio.run(_ask(None, engine, [(p, {}) for p in PROTECTED + PUBLIC]))
    assert statuses(answers) == [200] * len(PROTECTED + PUBLIC)


def test_the_openapi_document_declares_the_bearer_scheme_and_each_protected_scope(
    engine: Engine, published: Path
) -> None:
    [(_, _, document)] = ask(engine, published, ("/openapi.json", {}))
    scheme = document["components"]["securitySchemes"]["bearer"]
    assert (scheme["type"], scheme["scheme"], scheme["bearerFormat"]) == ("http", "bearer", "JWT")
    secured = {
        path: operation["get"]["security"]
        for path, operation in document["paths"].items()
        if "security" in operation["get"]
    }
    assert secured == {
        "/players/{player_id}/bets": [{"bearer": ["history:read"]}],
        "/tables/{table_id}/rounds/{round_id}": [{"bearer": ["history:read"]}],
        "/report": [{"bearer": ["report:read"]}],
        "/integrity": [{"bearer": ["report:read"]}],
    }
    assert "security" not in document
    for path in secured:
        responses = document["paths"][path]["get"]["responses"]
        assert {"401", "403"} <= set(responses)
        assert "WWW-Authenticate" in responses["401"]["headers"]
