"""The read side on a real broker answers exactly what the offline fold says for the same events."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

import msgspec
import pytest
from kafka import KafkaConsumer, TopicPartition  # type: ignore[import-untyped]

from schemas.journal import Journal
from services.cli import main
from services.settings import Settings
from services.settlement.fold import DEFAULT_HORIZON
from services.simulation.streams import Profile, Streams, generate
from services.statistics.command import findings
from tests.committed import commit
from tests.database import BACKENDS, fresh_url
from tests.e2e.support import Offline, get, offline, quote, read_side, wait_read_up
from tests.kafka import create_topics, isolated_settings, publish, wait_caught_up, workers

ROUNDS = 60  # per table: more than the board's 50


@dataclass(frozen=True)
class Pipeline:
    url: str
    second: str
    offline: Offline
    events: dict[str, int]
    streams: Streams


@pytest.fixture(scope="module", params=BACKENDS)
def pipeline(
    kafka: str, request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Pipeline]:
    """Generated streams through two `croupier worker`s into one `croupier api` over each
    database (its projector in process, and a second API process serving only), caught up."""
    settings = isolated_settings(kafka, partitions=4)
    create_topics(settings)
    streams = with_nul(
        generate(21, tables=6, rounds=ROUNDS, profile=Profile(bets_per_round=(0, 10)))
    )
    with (
        fresh_url(request.param, tmp_path_factory.mktemp("db")) as database,
        read_side(settings, database=database) as url,
    ):
        publish(settings, streams, seed=21)
        with workers(settings, 2):
            wait_caught_up(settings)
        wait_read_up(url)
        committed = commit(streams)
        journals = _committed_journals(settings)
        events = {
            "accepted": len(journals),
            "inputs": sum(len(j.inputs) for j in journals),
            "committed inputs": sum(
                len(msgspec.json.decode(raw, type=Journal).inputs)
                for raw, _ in committed.topics["accepted"]
            ),
            "rejected": committed.count("rejected"),
            "rejected for a NUL": sum(
                b"contains U+0000 (NUL)" in raw for raw, _ in committed.topics["rejected"]
            ),
        }
        with read_side(settings, "serving", database=database, serve_only=True) as second:
            wait_read_up(second)
            yield Pipeline(
                url=url, second=second, offline=offline(streams), events=events, streams=streams
            )


def with_nul(streams: Streams) -> Streams:
    """The streams with every 50th bet's player id ending in U+0000 (NUL), which the workers
    reject; before, they settled such a bet, and a projector on PostgreSQL failed on its batch at
    every start."""
    bets = list(streams.bets)
    for n in range(0, len(bets), 50):
        bet = msgspec.json.decode(bets[n])
        bets[n] = msgspec.json.encode(bet | {"player_id": bet["player_id"] + "\x00"})
    return Streams(rounds=streams.rounds, bets=bets)


def test_inputs_holding_a_nul_are_rejected_and_nothing_else_is_lost(pipeline: Pipeline) -> None:
    """The fold rejects them (the projector read as many rejections as it, in the metrics' test),
    and the database, PostgreSQL included, took all the rest (the tests above)."""
    assert pipeline.events["rejected for a NUL"] >= 10
    assert not any("\x00" in player for player in pipeline.offline.players)
    status, health = get(f"{pipeline.url}/health")
    assert status == 200 and health["caught_up"] is True


def history(url: str, player_id: str, limit: int) -> list[dict[str, Any]]:
    """Every page of a player's bets, following next_cursor."""
    bets: list[dict[str, Any]] = []
    query = f"limit={limit}"
    while True:
        status, page = get(f"{url}/players/{quote(player_id)}/bets?{query}")
        assert status == 200, page
        assert page["total"] >= len(bets) + len(page["bets"])
        bets += page["bets"]
        if page["next_cursor"] is None:
            return bets
        query = f"limit={limit}&cursor={page['next_cursor']}"


def decision_of(bet: dict[str, Any]) -> dict[str, Any]:
    """The decision a bet view shows, in the words of the settlement or refund record."""
    if bet["status"] == "settled":
        return {
            "settlement_id": bet["decision_id"],
            "result": bet["result"],
            "payout": bet["payout"],
        }
    return {"refund_id": bet["decision_id"], "reason": bet["refund_reason"], "amount": bet["stake"]}


def test_every_players_bets_are_the_replays_decisions_newest_first(pipeline: Pipeline) -> None:
    expected = pipeline.offline.decisions
    shown: dict[str, dict[str, Any]] = {}
    for player_id in sorted(pipeline.offline.players):
        bets = history(pipeline.url, player_id, limit=7)
        placed = [bet["placed_at"] for bet in bets]
        assert placed == sorted(placed, reverse=True), player_id
        for bet in bets:
            assert bet["player_id"] == player_id and bet["bet_id"] not in shown
            shown[bet["bet_id"]] = bet
    assert set(shown) == set(expected)
    for bet_id, bet in shown.items():
        record = expected[bet_id]
        assert decision_of(bet) == {k: record[k] for k in decision_of(bet)}, bet_id
        assert (bet["stake"], bet["currency"], bet["round_id"]) == (
            record.get("stake", record.get("amount")),
            record["currency"],
            record["round_id"],
        )
        if bet["status"] == "settled":
            assert (bet["dice"], bet["discs"]) == (record.get("dice"), record.get("discs"))
        else:  # a refund shows its round's outcome, if it has one
            phase, dice, discs = pipeline.offline.outcomes[(bet["table_id"], bet["round_id"])]
            shown = (dice, discs) if phase in ("result", "voided") else (None, None)
            assert (bet["dice"], bet["discs"]) == shown, bet_id


def test_an_offset_page_is_the_same_as_the_cursor_walk(pipeline: Pipeline) -> None:
    player_id = sorted(pipeline.offline.players)[0]
    walked = history(pipeline.url, player_id, limit=3)
    status, page = get(f"{pipeline.url}/players/{player_id}/bets?limit=4&offset=2")
    assert status == 200
    assert [b["bet_id"] for b in page["bets"]] == [b["bet_id"] for b in walked[2:6]]


def test_every_round_recall_has_the_replays_timeline_outcome_decisions_and_totals(
    pipeline: Pipeline,
) -> None:
    off = pipeline.offline
    by_round: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for record in off.decisions.values():
        by_round.setdefault((record["table_id"], record["round_id"]), []).append(record)
    assert len(off.outcomes) >= 6 * ROUNDS
    for (table_id, round_id), (phase, dice, discs) in off.outcomes.items():
        status, recall = get(f"{pipeline.url}/tables/{quote(table_id)}/rounds/{quote(round_id)}")
        assert status == 200, recall
        assert (recall["status"], recall["dice"], recall["discs"]) == (phase, dice, discs)
        assert [(s["type"], s["event_id"]) for s in recall["timeline"]] == off.timelines.get(
            (table_id, round_id), []
        )
        records = by_round.get((table_id, round_id), [])
        assert {b["bet_id"]: decision_of(b) for b in recall["bets"]} == {
            r["bet_id"]: {k: r[k] for k in decision_of_record(r)} for r in records
        }
        assert recall["totals"] == totals(records, off.adjustments)


def decision_of_record(record: dict[str, Any]) -> tuple[str, ...]:
    if "settlement_id" in record:
        return ("settlement_id", "result", "payout")
    return ("refund_id", "reason", "amount")


def totals(
    records: list[dict[str, Any]], adjustments: dict[str, list[dict[str, Any]]]
) -> list[dict[str, Any]]:
    """A round's money per currency, summed from the replay's records (a settled bet paying
    what its last adjustment says, if it has any)."""
    sums: dict[str, Counter[str]] = {}
    for r in records:
        row = sums.setdefault(r["currency"], Counter())
        row["bets"] += 1
        if "settlement_id" in r:
            row["settled"] += 1
            row["stakes"] += r["stake"]
            adjusted = adjustments.get(r["bet_id"])
            row["payouts"] += adjusted[-1]["payout"] if adjusted else r["payout"]
        else:
            row["refunded"] += 1
            row["refunds"] += r["amount"]
    keys = ("bets", "settled", "refunded", "pending", "stakes", "payouts", "ggr", "refunds")
    return [
        {
            "currency": currency,
            **{k: row[k] for k in keys},
            "ggr": row["stakes"] - row["payouts"],
            "pending_stakes": 0,
        }
        for currency, row in sorted(sums.items())
    ]


def _committed_journals(settings: Settings) -> list[Journal]:
    """Every journal record committed to the accepted topic."""
    consumer = KafkaConsumer(
        bootstrap_servers=settings.kafka_bootstrap, isolation_level="read_committed"
    )
    try:
        parts = [
            TopicPartition(settings.topic_accepted, p)
            for p in sorted(consumer.partitions_for_topic(settings.topic_accepted) or ())
        ]
        consumer.assign(parts)
        consumer.seek_to_beginning(*parts)
        ends = consumer.end_offsets(parts)
        found: list[Journal] = []
        while any(consumer.position(tp) < ends[tp] for tp in parts):
            for records in consumer.poll(timeout_ms=1000).values():
                found += [msgspec.json.decode(r.value, type=Journal) for r in records]
        return found
    finally:
        consumer.close()


def test_every_tables_board_is_the_replays_last_50_rounds(pipeline: Pipeline) -> None:
    assert len(pipeline.offline.stats) == 6
    for table_id, stats in pipeline.offline.stats.items():
        status, shown = get(f"{pipeline.url}/tables/{table_id}/stats")
        assert status == 200
        assert shown == stats
        assert 40 <= len(shown["rounds"]) <= 50  # the last 50 with a result, less the voided


def test_a_second_api_process_over_the_database_answers_the_same(pipeline: Pipeline) -> None:
    for player_id in sorted(pipeline.offline.players)[:10]:
        assert history(pipeline.second, player_id, limit=50) == history(
            pipeline.url, player_id, limit=50
        )
    assert get(f"{pipeline.second}/tables") == get(f"{pipeline.url}/tables")


def test_tables_lists_every_table_with_its_boards_last_result(pipeline: Pipeline) -> None:
    status, found = get(f"{pipeline.url}/tables")
    assert status == 200
    assert [t["table_id"] for t in found["tables"]] == sorted(pipeline.offline.stats)
    for t in found["tables"]:
        stats = pipeline.offline.stats[t["table_id"]]
        assert (t["game"], t["last_result"]) == (stats["game"], stats["rounds"][0])
        assert t["board"] == f"/tables/{t['table_id']}"


def test_unknown_ids_are_404(pipeline: Pipeline) -> None:
    assert get(f"{pipeline.url}/players/nobody/bets")[0] == 404
    assert get(f"{pipeline.url}/tables/T000/rounds/nothing")[0] == 404
    assert get(f"{pipeline.url}/tables/T999/stats")[0] == 404


def test_metrics_count_what_the_pipeline_committed(pipeline: Pipeline) -> None:
    import urllib.request

    with urllib.request.urlopen(f"{pipeline.url}/metrics") as response:
        text = response.read().decode()
    samples = dict(line.rsplit(" ", 1) for line in text.splitlines() if not line.startswith("#"))
    kinds = Counter(
        "settlement" if "settlement_id" in r else "refund"
        for r in pipeline.offline.decisions.values()
    )
    settled = sum(
        int(v)
        for k, v in samples.items()
        if k.startswith('croupier_read_decisions_total{kind="settlement"')
    )
    refunded = sum(
        int(v)
        for k, v in samples.items()
        if k.startswith('croupier_read_decisions_total{kind="refund"')
    )
    assert (settled, refunded) == (kinds["settlement"], kinds["refund"])
    accepted = samples['croupier_read_events_total{topic="accepted"}']
    assert accepted == str(pipeline.events["accepted"])
    # the workers' journals hold each accepted input once, however their batches were cut
    assert pipeline.events["inputs"] == pipeline.events["committed inputs"] > 0
    rejected = samples['croupier_read_events_total{topic="rejected"}']
    assert rejected == str(pipeline.events["rejected"])
    assert samples["croupier_read_pending_bets"] == "0"
    assert int(samples['croupier_read_decision_latency_seconds_bucket{le="+Inf"}']) == len(
        pipeline.offline.decisions
    )


def test_the_outcome_integrity_tests_are_the_commands_on_the_same_events(
    pipeline: Pipeline,
) -> None:
    """`GET /integrity` of the read side fed by the workers over a broker, against
    `croupier integrity --json` of the published events (any interleaving of the tables)."""
    lines = [raw for _, raw in pipeline.streams.tagged()]
    offline_lines = [
        msgspec.to_builtins(f) for f in findings(lines, window=100, horizon=DEFAULT_HORIZON)
    ]
    assert {f["id"] for f in offline_lines if f["scope"] == "table"} == set(pipeline.offline.stats)
    for url in (pipeline.url, pipeline.second):
        status, found = get(f"{url}/integrity?window=100")
        assert status == 200 and found == offline_lines


def test_the_report_of_a_period_of_gaming_days_is_croupier_reports_on_the_same_events(
    pipeline: Pipeline, tmp_path_factory: pytest.TempPathFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    """`GET /report` over gaming days from 20:00 in Kathmandu (+05:45: 14:15 UTC, amid the
    events, so both days hold some), against `croupier report --format json` of the published
    events (any interleaving of the tables), for the whole period and for its second day."""
    events = tmp_path_factory.mktemp("report") / "events.jsonl"
    events.write_bytes(b"".join(raw + b"\n" for _, raw in pipeline.streams.tagged()))
    gaming = {"day_starts": "20:00", "tz": "Asia/Kathmandu"}
    for first in ("2026-11-28", "2026-11-29"):
        period = {"from": first, "to": "2026-11-29", **gaming}
        flags = [f"--{k.replace('_', '-')}={v}" for k, v in period.items()]
        assert main(["report", "--format", "json", *flags, str(events)]) == 0
        expected = json.loads(capsys.readouterr().out)
        days = {row["day"] for row in expected["money"]}
        assert days == {"2026-11-28", "2026-11-29"} if first == "2026-11-28" else {first}
        for url in (pipeline.url, pipeline.second):
            status, found = get(f"{url}/report?{urlencode(period)}")
            assert status == 200 and found == expected
