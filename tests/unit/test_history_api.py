"""The read side's HTTP API in process: status codes, JSON errors, paging, metrics, OpenAPI."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
import schemathesis
from aiohttp.test_utils import TestClient, TestServer

from schemas.codec import encode
from schemas.records import Record, Refund, Rejected, Settlement
from services.history.api import application
from services.history.projection import Projection, Source
from services.settlement.fold import Fold
from tests.unit.builders import bet, sicbo_round

Answer = tuple[int, str, bytes]


def populated() -> Projection:
    """Round R1 of table T1 decided, alice with three bets, one of them in pending round R2."""
    inputs = [("rounds", raw) for raw in sicbo_round([4, 5, 6], last_seq=2)]
    inputs += [("bets", bet(1, "big", stake=100)), ("bets", bet(2, "small", stake=50))]
    inputs += [("rounds", sicbo_round([1, 1, 1], 0, round_id="R2")[0])]
    inputs += [("bets", bet(1, "odd", round_id="R2", at="2026-11-29T12:05:00Z"))]
    p, fold = Projection(), Fold()
    topics: dict[type[Record], Source] = {
        Settlement: "settlements",
        Refund: "refunds",
        Rejected: "rejected",
    }
    for topic, raw in inputs:
        p.feed("rounds" if topic == "rounds" else "bets", raw, 0)
        for record in fold.feed(topic, raw):
            p.feed(topics[type(record)], encode(record), 0)
    stats = fold.stats("T1")
    assert stats is not None
    p.feed("table-stats", encode(stats), 0)
    return p


async def _lag() -> int | None:
    return 0


def get(*paths: str, projection: Projection | None = None) -> list[Answer]:
    app = application(projection or populated(), _lag, poll_ms=500)

    async def go() -> list[Answer]:
        async with TestClient(TestServer(app)) as client:
            answers = []
            for path in paths:
                response = await client.get(path)
                answers.append(
                    (response.status, response.headers["Content-Type"], await response.read())
                )
            return answers

    return asyncio.run(go())


def body(answer: Answer) -> Any:
    status, kind, raw = answer
    assert kind.startswith("application/json"), (status, kind, raw)
    return json.loads(raw)


def test_a_players_bets_come_newest_first_with_decision_and_outcome() -> None:
    [answer] = get("/players/alice/bets")
    page = body(answer)
    assert answer[0] == 200
    assert page["total"] == 3 and page["next_cursor"] is None
    assert [b["bet_id"] for b in page["bets"]] == ["T1-R2-1", "T1-R1-2", "T1-R1-1"]
    pending, lost, won = page["bets"]
    assert (pending["status"], pending["payout"], pending["dice"]) == ("pending", None, None)
    assert (lost["status"], lost["result"], lost["payout"]) == ("settled", "lose", 0)
    assert (won["result"], won["payout"], won["dice"], won["game"]) == (
        "win",
        200,
        [4, 5, 6],
        "sicbo",
    )


def test_cursor_paging_follows_next_cursor_to_the_end() -> None:
    [first] = get("/players/alice/bets?limit=2")
    cursor = body(first)["next_cursor"]
    [second] = get(f"/players/alice/bets?limit=2&cursor={cursor}")
    assert [b["bet_id"] for b in body(second)["bets"]] == ["T1-R1-1"]
    assert body(second)["next_cursor"] is None


def test_unknown_ids_are_404_with_a_message_naming_them() -> None:
    answers = get("/players/zed/bets", "/tables/T1/rounds/R9", "/tables/T9/stats", "/nowhere")
    assert [a[0] for a in answers] == [404, 404, 404, 404]
    assert "'zed'" in body(answers[0])["detail"] and body(answers[0])["error"] == "not_found"
    assert "'R9'" in body(answers[1])["detail"]
    assert "'T9'" in body(answers[2])["detail"]


@pytest.mark.parametrize(
    "query",
    ["limit=0", "limit=501", "limit=ten", "offset=-1", "cursor=nonsense", "offset=1&cursor=WzFd"],
)
def test_bad_paging_parameters_are_422_and_say_why(query: str) -> None:
    [answer] = get(f"/players/alice/bets?{query}")
    assert answer[0] == 422
    error = body(answer)
    assert error["error"] == "invalid_parameters" and (error["problems"] or error["detail"])


def test_an_id_longer_than_the_contract_allows_is_422() -> None:
    [answer] = get("/tables/" + "T" * 257 + "/stats")
    assert answer[0] == 422 and "table_id" in body(answer)["detail"]


def test_round_recall_gives_timeline_bets_and_totals() -> None:
    [answer] = get("/tables/T1/rounds/R1")
    recall = body(answer)
    assert [s["type"] for s in recall["timeline"]] == [
        "round.opened",
        "round.betting_closed",
        "round.result",
    ]
    assert [b["bet_id"] for b in recall["bets"]] == ["T1-R1-1", "T1-R1-2"]
    [eur] = recall["totals"]
    assert (eur["stakes"], eur["payouts"], eur["ggr"], eur["refunds"]) == (150, 200, -50, 0)


def test_stats_are_the_table_stats_record() -> None:
    [answer] = get("/tables/T1/stats")
    stats = body(answer)
    assert stats["type"] == "table_stats" and stats["rounds"] == [
        {"round_id": "R1", "dice": [4, 5, 6]}
    ]
    assert stats["counts"]["big"] == 1 and stats["counts"]["totals"]["15"] == 1


def test_metrics_are_prometheus_text_with_every_family() -> None:
    [(status, kind, raw)] = get("/metrics")
    text = raw.decode()
    assert status == 200 and kind.startswith("text/plain; version=0.0.4")
    assert 'croupier_read_events_total{topic="bets"} 3' in text
    assert 'croupier_read_decisions_total{kind="settlement",outcome="win"} 1' in text
    assert "croupier_read_pending_bets 1" in text
    assert 'croupier_read_decision_latency_seconds_bucket{le="+Inf"} 2' in text


def test_health_says_caught_up_when_nothing_is_left_to_read() -> None:
    [answer] = get("/health")
    health = body(answer)
    assert (health["status"], health["caught_up"], health["pending_bets"]) == ("ok", True, 1)


def test_the_openapi_document_is_valid_and_lists_every_route() -> None:
    [answer] = get("/openapi.json")
    document = body(answer)
    schema = schemathesis.openapi.from_dict(document)
    operations = {(op.ok().method.upper(), op.ok().path) for op in schema.get_all_operations()}
    assert operations == {
        ("GET", "/players/{player_id}/bets"),
        ("GET", "/tables/{table_id}/rounds/{round_id}"),
        ("GET", "/tables/{table_id}/stats"),
        ("GET", "/tables/{table_id}"),
        ("GET", "/health"),
        ("GET", "/metrics"),
    }


def test_the_board_page_embeds_the_table_id_without_letting_it_run_as_code() -> None:
    [(status, kind, raw)] = get("/tables/%3C%2Fscript%3E%3Cb%3E/")
    assert status == 404  # a trailing slash is another path
    [(status, kind, raw)] = get("/tables/%3C%2Fscript%3E%3Cb%3Ex")
    page = raw.decode()
    assert status == 200 and kind.startswith("text/html")
    assert "</script><b>" not in page
    assert "&lt;/script&gt;&lt;b&gt;x" in page and '"\\u003c/script\\u003e\\u003cb\\u003ex"' in page
