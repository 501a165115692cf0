"""The read side's HTTP API in process over each database: status codes, errors, paging, pages."""

from __future__ import annotations

import asyncio
import base64
import json
from datetime import date, time
from typing import Any

import msgspec
import pytest
import schemathesis
from aiohttp.test_utils import TestClient, TestServer
from sqlalchemy import Engine

from services.history.api import application
from services.history.guard import TokenChecks
from services.history.models import BetsPage, HealthOut, RoundOut, StatsOut, TablesOut
from services.history.openapi import document
from services.history.queries import Reads
from services.history.store import Store
from services.reports.command import build
from services.reports.days import Period
from services.reports.render import as_csv, as_dict
from tests.committed import commit_inputs
from tests.database import project_all
from tests.tokens import ED, RSA, HeldKeys, bearer, token
from tests.unit.builders import bet, round_event, sicbo_round

Answer = tuple[int, str, bytes]


def inputs() -> list[tuple[str, bytes]]:
    """Round R1 of table T1 decided, alice with three bets, one of them in pending round R2."""
    inputs = [("rounds", raw) for raw in sicbo_round([4, 5, 6], last_seq=2)]
    inputs += [("bets", bet(1, "big", stake=100)), ("bets", bet(2, "small", stake=50))]
    inputs += [("rounds", round_event("opened", "R2", game="sicbo"))]
    inputs += [("bets", bet(1, "odd", round_id="R2", at="2026-11-29T12:05:00Z"))]
    inputs += [("bets", bet(3, "big", stake=70, player_id="bob"))]  # late: refunded
    inputs += [("bets", bet(1, "big", stake=100))]  # a redelivery: not accepted again
    inputs += [("bets", b"not json")]  # rejected
    return inputs


def populate(engine: Engine) -> None:
    """The database of `inputs()`."""
    project_all(Store(engine), commit_inputs(inputs()))


async def _lag() -> int | None:
    return 0


def get(engine: Engine, *paths: str) -> list[Answer]:
    """Each path's answer, asked with a token granting every scope (test_api_access.py tests
    the access control itself)."""
    populate(engine)
    app = application(Reads(engine), _lag, access=TokenChecks(keys=HeldKeys(ED, RSA)), poll_ms=500)
    authorization = bearer(token(ED))

    async def go() -> list[Answer]:
        async with TestClient(TestServer(app)) as client:
            answers = []
            for path in paths:
                response = await client.get(path, headers=authorization)
                answers.append(
                    (response.status, response.headers["Content-Type"], await response.read())
                )
            return answers

    return asyncio.run(go())


def body(answer: Answer) -> Any:
    status, kind, raw = answer
    assert kind.startswith("application/json"), (status, kind, raw)
    return json.loads(raw)


def test_a_players_bets_come_newest_first_with_decision_and_outcome(engine: Engine) -> None:
    [answer] = get(engine, "/players/alice/bets")
    page = body(answer)
    msgspec.convert(page, BetsPage)
    assert answer[0] == 200
    assert page["total"] == 3 and page["next_cursor"] is None
    assert [b["bet_id"] for b in page["bets"]] == ["T1-R2-1", "T1-R1-2", "T1-R1-1"]
    pending, lost, won = page["bets"]
    assert (pending["status"], pending["payout"], pending["dice"]) == ("pending", None, None)
    assert (pending["round_status"], pending["game"], pending["seq"]) == ("open", "sicbo", 1)
    assert (lost["status"], lost["result"], lost["payout"]) == ("settled", "lose", 0)
    assert (won["result"], won["payout"], won["dice"], won["game"]) == (
        "win",
        200,
        [4, 5, 6],
        "sicbo",
    )
    assert won["decision_id"] == "settlement:T1-R1-1" and won["placed_at"] == "2026-11-29T12:00:00Z"


def test_a_refunded_bet_shows_its_rounds_outcome(engine: Engine) -> None:
    [answer] = get(engine, "/players/bob/bets")
    page = body(answer)
    msgspec.convert(page, BetsPage)
    [late] = page["bets"]
    assert (late["status"], late["refund_reason"], late["stake"]) == ("refunded", "late_bet", 70)
    assert (late["dice"], late["discs"], late["round_status"]) == ([4, 5, 6], None, "result")


def test_cursor_paging_follows_next_cursor_to_the_end(engine: Engine) -> None:
    [first] = get(engine, "/players/alice/bets?limit=2")
    cursor = body(first)["next_cursor"]
    assert [b["bet_id"] for b in body(first)["bets"]] == ["T1-R2-1", "T1-R1-2"]
    [second] = get(engine, f"/players/alice/bets?limit=2&cursor={cursor}")
    assert [b["bet_id"] for b in body(second)["bets"]] == ["T1-R1-1"]
    assert body(second)["next_cursor"] is None


def test_an_offset_skips_the_newest_bets(engine: Engine) -> None:
    [answer] = get(engine, "/players/alice/bets?limit=5&offset=1")
    assert [b["bet_id"] for b in body(answer)["bets"]] == ["T1-R1-2", "T1-R1-1"]


def test_unknown_ids_are_404_with_a_message_naming_them(engine: Engine) -> None:
    answers = get(
        engine, "/players/zed/bets", "/tables/T1/rounds/R9", "/tables/T9/stats", "/nowhere"
    )
    assert [a[0] for a in answers] == [404, 404, 404, 404]
    assert "'zed'" in body(answers[0])["detail"] and body(answers[0])["error"] == "not_found"
    assert "'R9'" in body(answers[1])["detail"]
    assert "'T9'" in body(answers[2])["detail"]


@pytest.mark.parametrize(
    "query",
    ["limit=0", "limit=501", "limit=ten", "offset=-1", "cursor=nonsense", "offset=1&cursor=WzFd"],
)
def test_bad_paging_parameters_are_422_and_say_why(engine: Engine, query: str) -> None:
    [answer] = get(engine, f"/players/alice/bets?{query}")
    assert answer[0] == 422
    error = body(answer)
    assert error["error"] == "invalid_parameters" and (error["problems"] or error["detail"])


def test_an_id_longer_than_the_contract_allows_is_422(engine: Engine) -> None:
    [answer] = get(engine, "/tables/" + "T" * 257 + "/stats")
    assert answer[0] == 422 and "table_id" in body(answer)["detail"]


def cursor_of(key: list[Any]) -> str:
    return base64.urlsafe_b64encode(json.dumps(key).encode()).decode().rstrip("=")


@pytest.mark.parametrize(
    "path",
    [
        "/players/al%00ice/bets",
        "/tables/T%001/rounds/R1",
        "/tables/T1/rounds/R%001",
        "/tables/T%001/stats",
        "/tables/T%001",
        "/report?table_id=T%001",
        f"/players/alice/bets?offset={2**63}",
        f"/players/alice/bets?cursor={cursor_of([2**63, 'T1', 'R1', 1, 'R1-b1'])}",
        f"/players/alice/bets?cursor={cursor_of([1, 'T1', 'R1', 2**31, 'R1-b1'])}",
        "/players/alice/bets?cursor=" + cursor_of([1, "T\x00", "R1", 1, "R1-b1"]),
    ],
)
def test_a_parameter_no_database_column_can_hold_is_422_never_a_server_error(
    engine: Engine, path: str
) -> None:
    """A NUL (PostgreSQL's texts cannot hold one, and no id may), a number past 64 bits or a
    seq past 32: said before the database is asked, alike on both databases."""
    [answer] = get(engine, path)
    assert answer[0] == 422, answer
    assert body(answer)["error"] == "invalid_parameters"


def test_round_recall_gives_timeline_bets_and_totals(engine: Engine) -> None:
    [answer, pending] = get(engine, "/tables/T1/rounds/R1", "/tables/T1/rounds/R2")
    recall = body(answer)
    msgspec.convert(recall, RoundOut)
    assert [s["type"] for s in recall["timeline"]] == [
        "round.opened",
        "round.betting_closed",
        "round.result",
    ]
    assert recall["timeline"][1]["last_seq"] == 2 and recall["timeline"][1]["dice"] is None
    assert (recall["status"], recall["dice"], recall["game"]) == ("result", [4, 5, 6], "sicbo")
    assert [b["bet_id"] for b in recall["bets"]] == ["T1-R1-1", "T1-R1-2", "T1-R1-3"]
    [eur] = recall["totals"]
    assert (eur["stakes"], eur["payouts"], eur["ggr"], eur["refunds"]) == (150, 200, -50, 70)
    assert (eur["bets"], eur["settled"], eur["refunded"]) == (3, 2, 1)
    [open_] = body(pending)["totals"]
    assert (open_["pending"], open_["pending_stakes"], body(pending)["status"]) == (1, 100, "open")


def test_stats_are_the_table_stats_record(engine: Engine) -> None:
    [answer] = get(engine, "/tables/T1/stats")
    stats = body(answer)
    msgspec.convert(stats, StatsOut)
    assert stats["type"] == "table_stats" and stats["rounds"] == [
        {"round_id": "R1", "dice": [4, 5, 6]}
    ]
    assert stats["counts"]["big"] == 1 and stats["counts"]["totals"]["15"] == 1


def test_tables_lists_every_table_with_its_last_result_and_board(engine: Engine) -> None:
    [answer] = get(engine, "/tables")
    found = body(answer)
    msgspec.convert(found, TablesOut)
    assert found == {
        "tables": [
            {
                "table_id": "T1",
                "game": "sicbo",
                "last_result": {"round_id": "R1", "dice": [4, 5, 6]},
                "board": "/tables/T1",
                "stats": "/tables/T1/stats",
            }
        ]
    }


def test_the_front_page_links_every_board(engine: Engine) -> None:
    [(status, kind, raw)] = get(engine, "/")
    page = raw.decode()
    assert status == 200 and kind.startswith("text/html")
    assert '<a href="/tables/T1">T1</a>' in page and "R1: 4 5 6" in page


def test_metrics_are_prometheus_text_with_every_family(engine: Engine) -> None:
    [(status, kind, raw)] = get(engine, "/metrics")
    text = raw.decode()
    assert status == 200 and kind.startswith("text/plain; version=0.0.4")
    assert 'croupier_read_events_total{topic="accepted"} 1' in text  # one transaction's journal
    assert 'croupier_read_decisions_total{kind="settlement",outcome="win"} 1' in text
    assert 'croupier_read_rejections_total{reason="malformed"} 1' in text
    assert "croupier_read_pending_bets 1" in text
    assert 'croupier_read_decision_latency_seconds_bucket{le="+Inf"} 3' in text


def test_health_says_caught_up_when_nothing_is_left_to_read(engine: Engine) -> None:
    [answer] = get(engine, "/health")
    health = body(answer)
    msgspec.convert(health, HealthOut)
    assert (health["status"], health["caught_up"], health["pending_bets"]) == ("ok", True, 1)
    assert (health["players"], health["rounds"], health["tables"]) == (2, 2, 1)


def test_the_openapi_document_is_valid_and_lists_every_route(engine: Engine) -> None:
    [answer] = get(engine, "/openapi.json")
    document = body(answer)
    schema = schemathesis.openapi.from_dict(document)
    operations = {(op.ok().method.upper(), op.ok().path) for op in schema.get_all_operations()}
    assert operations == {
        ("GET", "/"),
        ("GET", "/tables"),
        ("GET", "/players/{player_id}/bets"),
        ("GET", "/integrity"),
        ("GET", "/tables/{table_id}/rounds/{round_id}"),
        ("GET", "/tables/{table_id}/stats"),
        ("GET", "/tables/{table_id}/distribution"),
        ("GET", "/tables/{table_id}"),
        ("GET", "/health"),
        ("GET", "/metrics"),
        ("GET", "/report"),
    }


def test_the_board_page_embeds_the_table_id_without_letting_it_run_as_code(
    engine: Engine,
) -> None:
    [(status, kind, raw)] = get(engine, "/tables/%3C%2Fscript%3E%3Cb%3E/")
    assert status == 404  # a trailing slash is another path
    [(status, kind, raw)] = get(engine, "/tables/%3C%2Fscript%3E%3Cb%3Ex")
    page = raw.decode()
    assert status == 200 and kind.startswith("text/html")
    assert "</script><b>" not in page
    assert "&lt;/script&gt;&lt;b&gt;x" in page and '"\\u003c/script\\u003e\\u003cb\\u003ex"' in page


def test_the_report_answers_json_csv_and_text_and_refuses_another_format(engine: Engine) -> None:
    as_json, as_csv, as_text, wrong = get(
        engine,
        "/report",
        "/report?format=csv&table_id=T1",
        "/report?format=text",
        "/report?format=xml",
    )
    report = body(as_json)
    [money] = report["money"]
    # alice's big 100 won 200, her small 50 lost, bob's late 70 was refunded
    assert (money["bets"], money["stakes"], money["refunds"], money["payouts"]) == (3, 220, 70, 200)
    assert (money["ggr"], money["rtp_percent"]) == (-50, "133.3333")
    assert report["rounds"][0]["results"] == 1
    assert as_csv[0] == 200 and as_csv[1].startswith("text/csv") and b"# money" in as_csv[2]
    assert as_text[0] == 200 and b"Corrections and voids" in as_text[2]
    assert wrong[0] == 422 and b"format" in wrong[2]


def test_the_report_of_a_period_of_gaming_days_is_the_files_over_the_same_period(
    engine: Engine,
) -> None:
    """R1 at 12:00 UTC: 13:00 in Malta, in the gaming day from 12:15 of 29 November; from
    13:15, in the one of 28 November."""
    found = get(
        engine,
        "/report?from=2026-11-29&to=2026-11-29&day_starts=12:15&tz=Europe/Malta",
        "/report?from=2026-11-28&to=2026-11-28&day_starts=13:15&tz=Europe/Malta",
        "/report?from=2026-11-29&day_starts=13:15&tz=Europe/Malta&format=csv",
    )
    offline = build([raw for _, raw in inputs()], horizon=200)
    for (status, _, raw), day, starts in zip(
        found[:2], ("2026-11-29", "2026-11-28"), (time(12, 15), time(13, 15)), strict=True
    ):
        period = Period(date.fromisoformat(day), date.fromisoformat(day), starts, "Europe/Malta")
        assert status == 200 and json.loads(raw) == as_dict(offline, period)
        assert [r["day"] for r in json.loads(raw)["rounds"]] == [day]
    period = Period(date(2026, 11, 29), None, time(13, 15), "Europe/Malta")
    assert found[2][2].decode() == as_csv(offline, period)
    assert (
        "# money\ntable_id" in found[2][2].decode() and ",2026-11-29," not in found[2][2].decode()
    )


@pytest.mark.parametrize(
    ("query", "said"),
    [
        ("tz=Europe/Atlantis", "no such zone"),
        ("tz=Europe", "no such zone"),
        ("tz=..%2Fetc", "tz: String should match pattern"),
        ("day_starts=06:10", "day_starts: String should match pattern"),
        ("day_starts=25:00", "day_starts: String should match pattern"),
        ("from=2026-02-30", "'2026-02-30' is no date"),
        ("from=2026-03-02&to=2026-03-01", "the period's first day 2026-03-02 is after its last"),
    ],
)
def test_an_unusable_period_of_the_report_is_422_with_its_reason(
    engine: Engine, query: str, said: str
) -> None:
    [answer] = get(engine, f"/report?{query}")
    assert answer[0] == 422, answer
    error = body(answer)
    assert error["error"] == "invalid_parameters"
    assert any(said in problem for problem in error["problems"]), error


def test_the_documented_bounds_of_a_pages_parameters_are_the_ones_the_api_checks(
    engine: Engine,
) -> None:
    operation = document()["paths"]["/players/{player_id}/bets"]["get"]
    bounds = {p["name"]: p["schema"] for p in operation["parameters"] if p["in"] == "query"}
    assert (bounds["limit"]["minimum"], bounds["limit"]["maximum"]) == (1, 500)
    assert bounds["limit"]["default"] == 50 and "default" not in bounds["offset"]
    limit, offset = bounds["limit"], bounds["offset"]
    asked = [
        f"/players/alice/bets?limit={limit['maximum']}",
        f"/players/alice/bets?limit={limit['maximum'] + 1}",
        f"/players/alice/bets?limit={limit['minimum'] - 1}",
        f"/players/alice/bets?offset={offset['maximum']}",
        f"/players/alice/bets?offset={offset['maximum'] + 1}",
        f"/players/alice/bets?offset={offset['minimum'] - 1}",
    ]
    assert [status for status, _, _ in get(engine, *asked)] == [200, 422, 422, 200, 422, 422]
