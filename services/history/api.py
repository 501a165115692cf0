"""The read side's HTTP API: a small aiohttp application over the database (a thin shell)."""

from __future__ import annotations

import asyncio
import html
import json
import logging
from collections.abc import Awaitable, Callable
from importlib import resources
from typing import Final, Literal, TypeVar

import msgspec
from aiohttp import web
from pydantic import BaseModel, ValidationError

from services.history.guard import TokenChecks, guard
from services.history.index import index_page
from services.history.models import (
    Answer,
    BetsQuery,
    ErrorOut,
    FindingOut,
    HealthOut,
    IntegrityQuery,
    ReportQuery,
    TablesOut,
)
from services.history.openapi import document
from services.history.paging import BadCursor, decode_cursor
from services.history.queries import Reads, health_counts
from services.history.tally import exposition
from services.reports.days import PeriodError
from services.reports.render import as_csv, as_json, as_text

log = logging.getLogger("croupier.api")
Lag = Callable[[], Awaitable[int | None]]
"""Committed messages not read yet, or None while the topics are not assigned."""

READS: Final = web.AppKey("reads", Reads)
LAG: Final[web.AppKey[Lag]] = web.AppKey("lag")
POLL_MS: Final = web.AppKey("poll_ms", int)
METRICS_TYPE: Final = "text/plain; version=0.0.4; charset=utf-8"
_BOARD: Final = resources.files("services.history").joinpath("board.html").read_text("utf-8")
_ENCODE: Final = msgspec.json.encode
_ERRORS: Final = {404: "not_found", 405: "method_not_allowed", 422: "invalid_parameters"}


def _problem(status: int, detail: str, problems: list[str] | None = None) -> web.Response:
    error = ErrorOut(error=_ERRORS.get(status, "internal"), detail=detail, problems=problems or [])
    return _answer(error, status=status)


class _Invalid(Exception):
    def __init__(self, detail: str, problems: list[str] | None = None) -> None:
        super().__init__(detail)
        self.detail = detail
        self.problems = problems or []


@web.middleware
async def _errors(
    request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
) -> web.StreamResponse:
    """Every error as JSON: unknown ids 404, bad parameters 422, and never a bare 500 page."""
    try:
        return await handler(request)
    except _Invalid as invalid:
        return _problem(422, invalid.detail, invalid.problems)
    except web.HTTPException as error:
        if error.status < 400:
            raise
        answer = _problem(error.status, error.reason or "request failed")
        if "Allow" in error.headers:
            answer.headers["Allow"] = error.headers["Allow"]
        return answer
    except Exception:
        log.exception("%s %s failed", request.method, request.path)
        return _problem(500, "the read side failed to answer; see its log")


def _id(request: web.Request, name: str) -> str:
    return _valid_id(name, request.match_info[name])


def _valid_id(name: str, value: str) -> str:
    """An id as the events may hold one (1 to 256 characters, no NUL), else 422."""
    if not 1 <= len(value) <= 256:
        raise _Invalid(f"{name}: expected 1 to 256 characters, got {len(value)}")
    if "\x00" in value:
        raise _Invalid(f"{name}: holds U+0000 (NUL), which no id may hold")
    return value


def _answer(answer: Answer, *, status: int = 200) -> web.Response:
    return web.Response(body=_ENCODE(answer), status=status, content_type="application/json")


Query = TypeVar("Query", bound=BaseModel)


def _query(request: web.Request, model: type[Query]) -> Query:
    """The query parameters as the model checks them, else 422 with each problem."""
    try:
        return model.model_validate(dict(request.query))
    except ValidationError as error:
        problems = [
            f"{'.'.join(str(part) for part in e['loc']) or 'query'}: {e['msg']}"
            for e in error.errors()
        ]
        raise _Invalid("invalid query parameters", problems) from None


async def player_bets(request: web.Request) -> web.Response:
    reads = request.app[READS]
    player_id = _id(request, "player_id")
    query = _query(request, BetsQuery)
    try:
        after = decode_cursor(query.cursor) if query.cursor is not None else None
    except BadCursor as bad:
        raise _Invalid(str(bad), [f"cursor: {bad}"]) from None
    found = await asyncio.to_thread(
        reads.history, player_id, limit=query.limit, offset=query.offset or 0, after=after
    )
    if found is None:
        return _problem(404, f"no bet of player {player_id!r} has been read")
    return _answer(found)


async def round_recall(request: web.Request) -> web.Response:
    reads = request.app[READS]
    table_id, round_id = _id(request, "table_id"), _id(request, "round_id")
    found = await asyncio.to_thread(reads.recall_json, table_id, round_id)
    if found is None:
        return _problem(404, f"no round {round_id!r} of table {table_id!r} has been read")
    return web.Response(body=found, content_type="application/json")


async def table_stats(request: web.Request) -> web.Response:
    table_id = _id(request, "table_id")
    stats = await asyncio.to_thread(request.app[READS].stats, table_id)
    if stats is None:
        return _problem(404, f"table {table_id!r} has no statistics yet (no round with a result)")
    return web.Response(text=stats, content_type="application/json")


REPORTS: Final = {
    "json": ("application/json", as_json),
    "csv": ("text/csv", as_csv),
    "text": ("text/plain", as_text),
}


async def table_distribution(request: web.Request) -> web.Response:
    """What a table's board charts: its window's counts against the fair counts."""
    table_id = _id(request, "table_id")
    found = await asyncio.to_thread(request.app[READS].distribution, table_id)
    if found is None:
        return _problem(
            404, f"table {table_id!r} has no counted round yet (no round with a result)"
        )
    return _answer(found)


async def report(request: web.Request) -> web.Response:
    """The regulator's report: the figures of `croupier report` over the database."""
    given = request.query.get("table_id")
    table_id = _valid_id("table_id", given) if given else None
    chosen = request.query.get("format", "json")
    if chosen not in REPORTS:
        raise _Invalid("format: one of json, csv, text", [f"format: {chosen!r} is not one of them"])
    content_type, render = REPORTS[chosen]
    period = _query(request, ReportQuery).period()
    found = await asyncio.to_thread(request.app[READS].report, table_id, period)
    try:
        text = render(found, period)
    except PeriodError as error:  # a gaming day of the figures off the quarter hours
        raise _Invalid(str(error), [f"tz: {error}"]) from None
    return web.Response(text=text, content_type=content_type)


async def integrity(request: web.Request) -> web.Response:
    """The outcome integrity tests: the lines of `croupier integrity --json` over the database."""
    query = _query(request, IntegrityQuery)
    found = await asyncio.to_thread(
        request.app[READS].integrity, query.window, query.scope, query.game
    )
    body = [FindingOut(**msgspec.structs.asdict(f)) for f in found]
    return web.Response(body=_ENCODE(body), content_type="application/json")


async def tables(request: web.Request) -> web.Response:
    return _answer(TablesOut(await asyncio.to_thread(request.app[READS].tables)))


async def index(request: web.Request) -> web.Response:
    """The front page: every table with its game and last result, linking to its board."""
    found = await asyncio.to_thread(request.app[READS].tables)
    return web.Response(text=index_page(found), content_type="text/html")


async def board(request: web.Request) -> web.Response:
    table_id = _id(request, "table_id")
    script_safe = json.dumps(table_id).replace("<", "\\u003c").replace(">", "\\u003e")
    text = (
        _BOARD.replace("{{TABLE_ID_JSON}}", script_safe)
        .replace("{{TABLE_ID}}", html.escape(table_id))
        .replace("{{POLL_MS}}", str(request.app[POLL_MS]))
    )
    return web.Response(text=text, content_type="text/html")


async def health(request: web.Request) -> web.Response:
    lag = await request.app[LAG]()
    pending, players, rounds, boards = await asyncio.to_thread(health_counts, request.app[READS])
    status: Literal["ok", "starting"] = "starting" if lag is None else "ok"
    return _answer(HealthOut(status, lag == 0, lag, pending, players, rounds, boards))


async def metrics(request: web.Request) -> web.Response:
    reads = request.app[READS]
    counters = await asyncio.to_thread(reads.counters)
    pending = await asyncio.to_thread(reads.pending)
    found = await asyncio.to_thread(reads.verdicts)
    text = exposition(counters, pending=pending, lag=await request.app[LAG](), integrity=found)
    return web.Response(text=text, headers={"Content-Type": METRICS_TYPE})


async def openapi(request: web.Request) -> web.Response:
    return web.json_response(document())


def application(
    reads: Reads, lag: Lag, *, access: TokenChecks | None, poll_ms: int = 1000
) -> web.Application:
    """The API over the read side's database; `lag` tells how far it is behind the topics.
    `access` checks the bearer tokens of the protected routes; None serves them to anyone
    (CROUPIER_API_AUTH=off, behind a gateway that checks them)."""
    app = web.Application(middlewares=[_errors] if access is None else [_errors, guard(access)])
    if access is not None:
        app.on_cleanup.append(lambda _: access.keys.close())
    app[READS] = reads
    app[LAG] = lag
    app[POLL_MS] = poll_ms
    app.router.add_get("/players/{player_id}/bets", player_bets)
    app.router.add_get("/tables/{table_id}/rounds/{round_id}", round_recall)
    app.router.add_get("/", index)
    app.router.add_get("/tables", tables)
    app.router.add_get("/report", report)
    app.router.add_get("/integrity", integrity)
    app.router.add_get("/tables/{table_id}/stats", table_stats)
    app.router.add_get("/tables/{table_id}/distribution", table_distribution)
    app.router.add_get("/tables/{table_id}", board)
    app.router.add_get("/health", health)
    app.router.add_get("/metrics", metrics)
    app.router.add_get("/openapi.json", openapi)
    return app
