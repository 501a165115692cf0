"""The OpenAPI 3.1 document of the read side's HTTP API, its schemas made from the answers' own
Structs (`models`)."""

from __future__ import annotations

from typing import Any, Final

import msgspec
from pydantic import BaseModel

from services.history.access import PROTECTED
from services.history.models import (
    RESPONSES,
    Answer,
    BetsPage,
    BetsQuery,
    DistributionOut,
    ErrorOut,
    FindingOut,
    HealthOut,
    IntegrityQuery,
    ReportQuery,
    RoundOut,
    StatsOut,
    TablesOut,
)
from services.reports.render import ReportOut

ID_RULE: Final = {"type": "string", "minLength": 1, "maxLength": 256, "pattern": "^[^\\u0000]*$"}
_REFS: Final = "#/components/schemas/{name}"


def _ref(model: type[Answer] | type[ReportOut]) -> dict[str, str]:
    return {"$ref": _REFS.format(name=model.__name__)}


def _json(model: type[Answer], description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": _ref(model)}}}


def _path_id(name: str, description: str, example: str) -> dict[str, Any]:
    return {
        "name": name,
        "in": "path",
        "required": True,
        "description": description,
        "schema": ID_RULE,
        "example": example,
    }


def _query(name: str, schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {
        "name": name,
        "in": "query",
        "required": False,
        "description": description,
        "schema": schema,
    }


def _parameters(model: type[BaseModel]) -> dict[str, dict[str, Any]]:
    """The schema of each query parameter a pydantic model checks, as its JSON Schema says it,
    without the null that stands for a parameter left out."""
    found = {}
    for name, schema in model.model_json_schema()["properties"].items():
        [kept] = [one for one in schema.get("anyOf", [schema]) if one.get("type") != "null"]
        default = {"default": schema["default"]} if schema.get("default") is not None else {}
        found[name] = {k: v for k, v in kept.items() if k not in ("title", "default")} | default
    return found


_PAGING: Final = _parameters(BetsQuery)
"""A history page's query parameters, as `BetsQuery` checks them."""
_INTEGRITY: Final = _parameters(IntegrityQuery)
"""The integrity tests' query parameters, as `IntegrityQuery` checks them."""
_REPORT: Final = _parameters(ReportQuery)
"""The report's period's query parameters, as `ReportQuery` checks them."""
_NOT_FOUND: Final = _json(ErrorOut, "Unknown id: nothing about it has been read yet")
_INVALID: Final = _json(ErrorOut, "A parameter is out of range or malformed")
_TABLE: Final = _path_id("table_id", "The table, as in `table_id` of the events", "T000")
SCHEME: Final = "bearer"
_CHALLENGE: Final = {
    "WWW-Authenticate": {
        "description": "The bearer challenge (RFC 6750): `error` and `error_description` when a "
        "token was given, `scope` when it lacks the one needed",
        "schema": {"type": "string"},
    }
}


def _refused(description: str) -> dict[str, Any]:
    return {**_json(ErrorOut, description), "headers": _CHALLENGE}


def _secured(paths: dict[str, Any]) -> dict[str, Any]:
    """The protected operations (`access.PROTECTED`) with their scope and their refusals."""
    for path, scope in PROTECTED.items():
        operation = paths[path]["get"]
        operation["security"] = [{SCHEME: [scope]}]
        operation["description"] = (
            f"{operation.get('description', '')} Needs a bearer token granting `{scope}`."
        ).strip()
        operation["responses"] |= {
            "401": _refused("No bearer token, or one that does not verify"),
            "403": _refused(f"The token does not grant `{scope}`"),
            "503": _json(ErrorOut, "The signing keys (JWKS URL) cannot be fetched now"),
        }
    return paths


def _operations() -> dict[str, Any]:
    return {
        "/players/{player_id}/bets": {
            "get": {
                "operationId": "playerBets",
                "summary": "A player's bet history, newest first",
                "description": "Every confirmed bet of the player with its status (pending, "
                "settled, refunded), stake, result, payout and the round's outcome. Page with "
                "`cursor` (stable while new bets arrive) or `offset`, not both.",
                "parameters": [
                    _path_id("player_id", "The player, as in `player_id` of the bets", "P0007"),
                    _query("limit", _PAGING["limit"], "Bets per page"),
                    _query("cursor", _PAGING["cursor"], "`next_cursor` of the previous page"),
                    _query("offset", _PAGING["offset"], "Bets to skip"),
                ],
                "responses": {
                    "200": _json(BetsPage, "One page of the history"),
                    "404": _NOT_FOUND,
                    "422": _INVALID,
                },
            }
        },
        "/report": {
            "get": {
                "operationId": "report",
                "summary": "The regulator's report: rounds, money, GGR, RTP, corrections",
                "description": "Per table, game, gaming day and currency over a period of "
                "gaming days (`from` to `to`, each day starting at `day_starts` in `tz`; the UTC "
                "days unless told): rounds with a result, cancelled, corrected and voided; bets, "
                "stakes, refunds, payouts (adjustments included), GGR, actual RTP next to the PAR "
                "sheet's RTP of the same bets; the period's totals; every correction and void "
                "with who authorised it. The figures of `croupier report` over the same events "
                "and period.",
                "parameters": [
                    _query("table_id", {"type": "string"}, "Only this table (empty: every table)"),
                    _query(
                        "format",
                        {"type": "string", "enum": ["json", "csv", "text"], "default": "json"},
                        "json, csv or text",
                    ),
                    _query(
                        "from",
                        _REPORT["from"],
                        "The period's first gaming day (default: the first with figures)",
                    ),
                    _query(
                        "to",
                        _REPORT["to"],
                        "The period's last gaming day, inclusive (default: the last with figures)",
                    ),
                    _query(
                        "day_starts",
                        _REPORT["day_starts"],
                        "When a gaming day starts, local time (HH:MM) on a quarter hour; a "
                        "gaming day is named by the date it starts on",
                    ),
                    _query("tz", _REPORT["tz"], "The gaming day's time zone, an IANA name"),
                ],
                "responses": {
                    "200": {
                        "description": "The report",
                        "content": {
                            "application/json": {"schema": _ref(ReportOut)},
                            "text/csv": {"schema": {"type": "string"}},
                            "text/plain": {"schema": {"type": "string"}},
                        },
                    },
                    "422": _INVALID,
                },
            }
        },
        "/integrity": {
            "get": {
                "operationId": "integrity",
                "summary": "Outcome integrity: each table's, dealer's and shaker's outcomes "
                "against the fair distribution",
                "description": "Per scope (a table, dealer or shaker within one game) and test "
                "(faces, totals, reds): Pearson's chi-square of the scope's last `window` counted "
                "rounds, its p-value and verdict, sorted by scope, id and test (then game). The "
                "lines of `croupier integrity --json` over the same events.",
                "parameters": [
                    _query("window", _INTEGRITY["window"], "Counted rounds of each scope tested"),
                    _query("scope", _INTEGRITY["scope"], "Only this kind of scope"),
                    _query("game", _INTEGRITY["game"], "Only this game"),
                ],
                "responses": {
                    "200": {
                        "description": "Every test of every scope, as JSON Lines' objects",
                        "content": {
                            "application/json": {
                                "schema": {"type": "array", "items": _ref(FindingOut)}
                            }
                        },
                    },
                    "422": _INVALID,
                },
            }
        },
        "/tables/{table_id}/rounds/{round_id}": {
            "get": {
                "operationId": "roundRecall",
                "summary": "Game recall: a round's timeline, outcome, bets and totals",
                "parameters": [
                    _TABLE,
                    _path_id("round_id", "The round, as in `round_id`", "T000-R0000003"),
                ],
                "responses": {
                    "200": _json(RoundOut, "The round as recalled"),
                    "404": _NOT_FOUND,
                    "422": _INVALID,
                },
            }
        },
        "/": {
            "get": {
                "operationId": "index",
                "summary": "The front page: every table, linking to its board (HTML page)",
                "responses": {
                    "200": {
                        "description": "The tables",
                        "content": {"text/html": {"schema": {"type": "string"}}},
                    }
                },
            }
        },
        "/tables": {
            "get": {
                "operationId": "tables",
                "summary": "Every table with its game, its last result and its board's link",
                "responses": {"200": _json(TablesOut, "Every table, in table_id order")},
            }
        },
        "/tables/{table_id}/stats": {
            "get": {
                "operationId": "tableStats",
                "summary": "The table's statistics over its last 50 rounds with a result",
                "parameters": [_TABLE],
                "responses": {
                    "200": _json(StatsOut, "The last `table_stats` record of the table"),
                    "404": _NOT_FOUND,
                    "422": _INVALID,
                },
            }
        },
        "/tables/{table_id}/distribution": {
            "get": {
                "operationId": "tableDistribution",
                "summary": "The table's outcomes against the fair distribution, as its board "
                "charts them",
                "description": "The counts of the integrity test `faces` (sicbo, thai-hilo) or "
                "`reds` (xocdia) over the table's last 2000 counted rounds of the game of its "
                "newest one, and each class's exact fair count: the counts and the expected "
                "counts of the chi-square `GET /integrity` reports for the table, without its "
                "verdict.",
                "parameters": [_TABLE],
                "responses": {
                    "200": _json(DistributionOut, "The table's window against the fair counts"),
                    "404": _NOT_FOUND,
                    "422": _INVALID,
                },
            }
        },
        "/tables/{table_id}": {
            "get": {
                "operationId": "tableBoard",
                "summary": "The live statistics board of a table (HTML page)",
                "parameters": [_TABLE],
                "responses": {
                    "200": {
                        "description": "The board",
                        "content": {"text/html": {"schema": {"type": "string"}}},
                    },
                    "422": _INVALID,
                },
            }
        },
        "/health": {
            "get": {
                "operationId": "health",
                "summary": "Whether the read side runs and has read everything committed",
                "responses": {"200": _json(HealthOut, "The process is up")},
            }
        },
        "/metrics": {
            "get": {
                "operationId": "metrics",
                "summary": "Prometheus metrics (text exposition format 0.0.4)",
                "responses": {
                    "200": {
                        "description": "The metrics",
                        "content": {"text/plain": {"schema": {"type": "string"}}},
                    }
                },
            }
        },
    }


def document() -> dict[str, Any]:
    """The whole OpenAPI document, served at /openapi.json."""
    _, schemas = msgspec.json.schema_components((*RESPONSES, ReportOut), ref_template=_REFS)
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "croupier read side",
            "version": "1",
            "description": "Bet history, round recall and the 50-round statistics board, "
            "projected from croupier's committed topics into a database. Money is integer minor "
            "units.",
        },
        "paths": _secured(_operations()),
        "components": {
            "schemas": schemas,
            "securitySchemes": {
                SCHEME: {
                    "type": "http",
                    "scheme": "bearer",
                    "bearerFormat": "JWT",
                    "description": "An access token (JWT, EdDSA or RS256) for audience "
                    "`croupier`, its scopes in `scope` (space-separated) or `scp` (a list): "
                    "`history:read` for histories and recalls, `report:read` for the report and "
                    "the integrity tests. Every other operation is public.",
                }
            },
        },
    }
