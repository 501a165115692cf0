"""The read side killed with SIGKILL resumes from the positions in its database: it answers as the
replay of everything, nothing missing or doubled."""

from __future__ import annotations

from typing import Any

from services.simulation.streams import Streams, generate
from tests.e2e.support import get, offline, read_side, wait_read_up
from tests.kafka import create_topics, isolated_settings, publish, wait_caught_up, workers


def answers(url: str, tables: list[str], players: list[str]) -> dict[str, Any]:
    shown: dict[str, Any] = {}
    for table_id in tables:
        shown[f"stats {table_id}"] = get(f"{url}/tables/{table_id}/stats")[1]
    for player_id in players:
        status, page = get(f"{url}/players/{player_id}/bets?limit=500")
        assert status == 200
        shown[f"bets {player_id}"] = {
            b["bet_id"]: (b["status"], b["result"], b["payout"], b["refund_reason"])
            for b in page["bets"]
        }
    return shown


def replayed(streams: Streams, players: list[str]) -> dict[str, Any]:
    off = offline(streams)
    expected: dict[str, Any] = {f"stats {t}": stats for t, stats in sorted(off.stats.items())}
    for player_id in players:
        expected[f"bets {player_id}"] = {
            bet_id: (
                "settled" if "settlement_id" in r else "refunded",
                r.get("result"),
                r.get("payout"),
                r.get("reason"),
            )
            for bet_id, r in off.decisions.items()
            if r["player_id"] == player_id
        }
    return expected


def test_a_killed_read_side_resumes_from_its_database_and_catches_up(kafka: str) -> None:
    settings = isolated_settings(kafka, partitions=3)
    create_topics(settings)
    first = generate(31, tables=3, rounds=8)
    second = generate(32, tables=3, rounds=8, first_round=100)
    both = Streams(rounds=first.rounds + second.rounds, bets=first.bets + second.bets)
    tables = ["T000", "T001", "T002"]
    players = sorted(offline(first).players)[:12]

    publish(settings, first, seed=1)
    with workers(settings, 1):
        wait_caught_up(settings)
        with read_side(settings, "first", kill=True) as url:
            wait_read_up(url)
            assert answers(url, tables, players) == replayed(first, players)
        publish(settings, second, seed=2)  # while the read side is down
        wait_caught_up(settings)
        with read_side(settings, "again") as url:
            wait_read_up(url)
            assert answers(url, tables, players) == replayed(both, players)
