"""The report from the read side's database has exactly the figures of `croupier report FILE`."""

from __future__ import annotations

import random
from datetime import date, time

import pytest
from alembic import command
from sqlalchemy import Engine, text

from schemas.events import SEQ_MAX
from services.history.migrate import config, current, upgrade
from services.history.queries import Reads
from services.history.store import Store
from services.history.store.report_figures import Figures
from services.reports.command import build
from services.reports.days import Period
from services.reports.render import as_dict
from services.simulation.streams import Profile, generate, interleave
from tests.committed import commit, commit_inputs, shuffled
from tests.database import project, project_all

NOV_28, NOV_29 = date(2026, 11, 28), date(2026, 11, 29)
STREAMS = generate(
    11, tables=4, rounds=30, profile=Profile(bets_per_round=(0, 8), correct=0.3, void=0.1)
)


def test_the_database_report_equals_the_report_of_the_replay_file(engine: Engine) -> None:
    lines = [raw for _, raw in interleave(STREAMS, random.Random(5))]
    offline = as_dict(build(lines, horizon=200))
    project_all(Store(engine), commit(STREAMS, seed=5), seed=2)
    found = as_dict(Reads(engine).report())
    assert offline["corrections"], "the streams should hold corrections"
    assert any(row["adjustments"] for row in offline["money"])
    assert found == offline
    one = as_dict(Reads(engine).report("T001"))
    assert one["money"] == [row for row in offline["money"] if row["table_id"] == "T001"]


@pytest.mark.parametrize(
    ("starts", "zone"),
    [(time(19, 30), "Asia/Kathmandu"), (time(14, 15), "Europe/Malta"), (time(0), "UTC")],
)
def test_the_database_report_of_any_period_of_gaming_days_equals_the_replay_files(
    engine: Engine, starts: time, zone: str
) -> None:
    """The streams' rounds run from 12:00 to 15:04 UTC on 29 November 2026: days from 19:30 in
    Kathmandu (13:45 UTC) or 14:15 in Malta (13:15 UTC) cut them in two."""
    lines = [raw for _, raw in interleave(STREAMS, random.Random(5))]
    offline = build(lines, horizon=200)
    project_all(Store(engine), commit(STREAMS, seed=5), seed=2)
    reads = Reads(engine)
    split = zone != "UTC"
    for first, last in ((None, None), (NOV_28, NOV_28), (NOV_29, None), (NOV_29, NOV_29)):
        period = Period(first, last, starts, zone)
        expected = as_dict(offline, period)
        assert as_dict(reads.report(None, period), period) == expected
        days = {row["day"] for row in expected["money"]}
        if first is None:
            assert days == ({"2026-11-28", "2026-11-29"} if split else {"2026-11-29"})
        else:
            assert days == ({first.isoformat()} if split or first == NOV_29 else set())


def test_the_figures_kept_batch_by_batch_equal_the_report_of_every_row(engine: Engine) -> None:
    project_all(Store(engine), commit(STREAMS, seed=8), seed=9)  # other batches, other cuts
    with engine.connect() as db:
        kept, from_rows = as_dict(Figures(db).get()), as_dict(Figures(db).from_rows())
    assert kept["corrections"] and kept == from_rows


def test_the_migration_that_keeps_figures_fills_them_from_the_rows_already_there(
    engine: Engine,
) -> None:
    lines = [raw for _, raw in interleave(STREAMS, random.Random(5))]
    offline = as_dict(build(lines, horizon=200))
    project_all(Store(engine), commit(STREAMS, seed=5), seed=2)
    cfg = config()
    with engine.begin() as connection:  # back to before the figures were kept: their tables go
        cfg.attributes["connection"] = connection
        command.downgrade(cfg, "0005")
    assert current(engine) == "0005"

    upgrade(engine)

    assert as_dict(Reads(engine).report()) == offline


def test_going_down_from_quarter_hours_keeps_the_utc_days_figures_and_up_again_the_quarters(
    engine: Engine,
) -> None:
    """Migration 0010 down: the tables per UTC day as before it, their figures the report's of
    every row; up again: the report as before the round trip."""
    lines = [raw for _, raw in interleave(STREAMS, random.Random(5))]
    offline = as_dict(build(lines, horizon=200))
    project_all(Store(engine), commit(STREAMS, seed=5), seed=2)
    cfg = config()
    with engine.begin() as connection:
        cfg.attributes["connection"] = connection
        command.downgrade(cfg, "0009")
    with engine.connect() as db:
        money = db.execute(
            text(
                "SELECT table_id, game, day, currency, bets, stakes, refunds, payouts, adjustments "
                "FROM report_money ORDER BY table_id, game, day, currency"
            )
        ).all()
        fates = db.execute(text("SELECT SUM(corrected), SUM(voided) FROM report_rounds")).one()
        corrections = db.execute(text("SELECT day, at FROM report_corrections")).all()
    columns = ("table_id", "game", "day", "currency", "bets", "stakes", "refunds", "payouts")
    assert [(*row[:4], *(int(figure) for figure in row[4:])) for row in money] == [
        tuple(m[c] for c in (*columns, "adjustments")) for m in offline["money"]
    ]
    assert tuple(fates) == (
        sum(r["corrected"] for r in offline["rounds"]),
        sum(r["voided"] for r in offline["rounds"]),
    )
    assert len(corrections) == len(offline["corrections"]) > 0
    assert all(day == at[:10] for day, at in corrections)  # the streams' `at`s are in UTC

    upgrade(engine)

    assert as_dict(Reads(engine).report()) == offline


def one_round(
    bets: int, stake: int, at: str = "2026-11-01T00:00:07Z", first: int = 1
) -> list[tuple[str, bytes]]:
    """One sicbo round at `at` of `bets` winning bets of `stake` (placed at 00:00:07), their seqs
    counted from `first`."""
    head = f'"v":1,"table_id":"T9","round_id":"R1","at":"{at}"'
    placed = '"v":1,"table_id":"T9","round_id":"R1","at":"2026-11-01T00:00:07Z"'
    inputs = [("rounds", f'{{"type":"round.opened","event_id":"o",{head},"game":"sicbo"}}')]
    inputs += [
        (
            "bets",
            f'{{"type":"bet.placed","event_id":"b{n}",{placed},"bet_id":"B{n}","player_id":"P{n % 7}",'
            f'"seq":{n},"kind":"big","stake":{stake},"currency":"EUR"}}',
        )
        for n in range(first, first + bets)
    ]
    last = first + bets - 1
    inputs += [
        ("rounds", f'{{"type":"round.betting_closed","event_id":"c",{head},"last_seq":{last}}}'),
        ("rounds", f'{{"type":"round.result","event_id":"r",{head},"dice":[4,5,6]}}'),
    ]
    return [(topic, raw.encode()) for topic, raw in inputs]


def test_a_days_sums_past_64_bits_are_kept_exactly_as_the_replay_makes_them(
    engine: Engine,
) -> None:
    """600 bets of 2**53 - 1 paid 2 to 1: the day's payouts pass 2**63, where BIGINT and
    SQLite's integers stop (the projector once failed there at every start)."""
    inputs = one_round(600, 2**53 - 1)
    offline = as_dict(build([raw for _, raw in inputs], horizon=200))
    project_all(Store(engine), commit_inputs(inputs, batch=100), seed=3)
    found = as_dict(Reads(engine).report())
    [money] = found["money"]
    assert money["payouts"] == 600 * 2 * (2**53 - 1) > 2**63
    assert found == offline


@pytest.mark.parametrize(
    "at",
    [
        "2026-12-31T23:59:60Z",  # a leap second: its day's last second
        "2026-11-29t12:00:00z",
        "2026-11-29 12:00:00+05:30",
        "0001-01-01T00:30:00+01:00",  # UTC: 0000-12-31
        "9999-12-31T23:59:59-01:00",  # UTC: 10000-01-01
    ],
)
def test_a_round_at_any_time_the_fold_accepts_is_projected_and_reported_as_the_replay(
    engine: Engine, at: str
) -> None:
    """The projector once failed on such a round at every start (its report's day)."""
    inputs = one_round(3, 100, at)
    committed = commit_inputs(inputs, batch=100)
    assert committed.count("rejected") == 0
    offline = as_dict(build([raw for _, raw in inputs], horizon=200))
    project_all(Store(engine), committed, seed=3)
    assert as_dict(Reads(engine).report()) == offline
    page = Reads(engine).history("P1", limit=10)
    assert page is not None and [b.bet_id for b in page.bets] == ["B1"]


def test_the_largest_seq_the_contract_allows_is_projected_and_recalled(engine: Engine) -> None:
    inputs = one_round(2, 100, first=SEQ_MAX - 1)
    committed = commit_inputs(inputs, batch=100)
    assert committed.count("rejected") == 0
    project_all(Store(engine), committed, seed=4)
    recall = Reads(engine).recall("T9", "R1")
    assert recall is not None and [b.seq for b in recall.bets] == [SEQ_MAX - 1, SEQ_MAX]
    assert as_dict(Reads(engine).report()) == as_dict(build([r for _, r in inputs], horizon=200))


def round_of(table: str, player: str) -> list[tuple[str, bytes]]:
    """One sicbo round R1 at `table` of one winning bet B1 of 100 by `player`."""
    head = f'"v":1,"table_id":"{table}","round_id":"R1","at":"2026-11-01T00:00:07Z"'
    inputs = [
        ("rounds", f'{{"type":"round.opened","event_id":"o{table}",{head},"game":"sicbo"}}'),
        (
            "bets",
            f'{{"type":"bet.placed","event_id":"b{table}",{head},"bet_id":"B1",'
            f'"player_id":"{player}","seq":1,"kind":"big","stake":100,"currency":"EUR"}}',
        ),
        ("rounds", f'{{"type":"round.betting_closed","event_id":"c{table}",{head},"last_seq":1}}'),
        ("rounds", f'{{"type":"round.result","event_id":"r{table}",{head},"dice":[4,5,6]}}'),
    ]
    return [(topic, raw.encode()) for topic, raw in inputs]


@pytest.mark.parametrize("batch", [1, 3, 1000])
def test_a_bet_id_two_tables_reuse_is_two_bets_however_the_batches_cut(
    engine: Engine, batch: int
) -> None:
    """The contract makes bet ids unique across tables, and the workers cannot see two tables
    break it: then the read side keeps both bets, each with its decision, and the report counts
    both, as the file report does, whichever batches read them."""
    inputs = round_of("T1", "alice") + round_of("T2", "bob")
    offline = as_dict(build([raw for _, raw in inputs], horizon=200))
    rng = random.Random(batch)
    project(Store(engine), shuffled(commit_inputs(inputs, batch=4), rng), rng, largest=batch)
    reads = Reads(engine)
    for player, table in (("alice", "T1"), ("bob", "T2")):
        page = reads.history(player, limit=10)
        assert page is not None
        assert [(b.bet_id, b.table_id, b.status) for b in page.bets] == [("B1", table, "settled")]
    found = as_dict(reads.report())
    assert sum(row["bets"] for row in found["money"]) == 2
    assert found == offline
    assert reads.pending() == 0
