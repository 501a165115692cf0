"""The outcome integrity tests of the live system (`GET /integrity`, its metric) have exactly the
figures of `croupier integrity --json` on the same inputs, over each database."""

from __future__ import annotations

import asyncio
import json
import random
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

import msgspec
from aiohttp.test_utils import TestClient, TestServer
from alembic import command
from sqlalchemy import Engine, delete

from services.history import schema
from services.history.api import application
from services.history.guard import TokenChecks
from services.history.migrate import config, current, upgrade
from services.history.models import FindingOut
from services.history.queries import Reads
from services.history.store import Store
from services.settlement.fold import DEFAULT_HORIZON
from services.simulation.simulator import Config, Simulation, Situations
from services.statistics.command import findings
from tests.committed import commit_inputs, shuffled
from tests.database import project, project_all
from tests.tokens import ED, HeldKeys, bearer, token

ROOT = Path(__file__).resolve().parents[2]
FLOOR = Config(
    tables=3,
    players=3,
    rounds=700,
    seed=5,
    loaded=frozenset({("dealer", "D03")}),
    situations=Situations(cancel=0.05, correct=0.08, void=0.03),
)
"""Three tables (Sic Bo, Thai HiLo, Xoc Dia), dealer D03's dice and discs loaded; rounds
cancelled, corrected and voided more often than on a real floor."""


@cache
def floor() -> tuple[tuple[str, bytes], ...]:
    """The floor's input messages, (topic role, bytes), in the order they are sent."""
    return tuple((e.message.topic, e.message.value) for e in Simulation(FLOOR))


def cli(path: Path, *args: str) -> list[dict[str, Any]]:
    """`croupier integrity PATH --json ARGS` as a user runs it."""
    done = subprocess.run(
        [sys.executable, "-m", "services.cli", "integrity", str(path), "--json", *args],
        capture_output=True,
        cwd=ROOT,
        check=True,
    )
    return [json.loads(line) for line in done.stdout.splitlines()]


async def _lag() -> int | None:
    return 0


def ask(engine: Engine, *paths: str, scope: str | None = "report:read") -> list[tuple[int, Any]]:
    """Each path's status and decoded body (the metrics' text as it is), with a token granting
    `scope` (None: no token)."""
    app = application(Reads(engine), _lag, access=TokenChecks(keys=HeldKeys(ED)), poll_ms=500)
    headers = {} if scope is None else bearer(token(ED, scope=scope))

    async def go() -> list[tuple[int, Any]]:
        async with TestClient(TestServer(app)) as client:
            found = []
            for path in paths:
                response = await client.get(path, headers=headers)
                raw = await response.read()
                is_json = response.headers["Content-Type"].startswith("application/json")
                found.append((response.status, json.loads(raw) if is_json else raw.decode()))
            return found

    return asyncio.run(go())


def _written(tmp_path: Path) -> Path:
    path = tmp_path / "floor.jsonl"
    path.write_bytes(b"\n".join(raw for _, raw in floor()) + b"\n")
    return path


def test_the_live_figures_equal_the_commands_on_the_same_inputs(
    engine: Engine, tmp_path: Path
) -> None:
    path = _written(tmp_path)
    committed = commit_inputs(floor(), batch=40)
    assert committed.count("rejected") == 0
    project_all(Store(engine), committed, seed=4)

    asked = ask(
        engine,
        "/integrity",
        "/integrity?window=100",
        "/integrity?window=100&scope=dealer",
        "/integrity?game=xocdia",
    )
    assert [status for status, _ in asked] == [200] * 4
    (_, whole), (_, hundred), (_, dealers), (_, xocdia) = asked
    offline = cli(path)
    assert whole == offline
    raised = {(f["id"], f["game"], f["test"], f["verdict"]) for f in offline}
    raised -= {(name, game, test, v) for name, game, test, v in raised if v in ("ok", "too_few")}
    assert raised == {("D03", "thai-hilo", "faces", "alarm"), ("D03", "xocdia", "reds", "watch")}
    offline_100 = cli(path, "--window", "100")
    assert hundred == offline_100
    assert {f["rounds"] for f in hundred} == {100}
    assert dealers == [f for f in offline_100 if f["scope"] == "dealer"]
    assert xocdia == [f for f in offline if f["game"] == "xocdia"] != []
    for answer in whole:
        msgspec.convert(answer, FindingOut)


def test_cancelled_corrected_and_voided_rounds_are_counted_as_the_fold_leaves_them(
    engine: Engine, tmp_path: Path
) -> None:
    """The floor's fates reach the database: every round opened is either counted, cancelled,
    voided or still open, and the counted ones carry their last correction."""
    project_all(Store(engine), commit_inputs(floor(), batch=40), seed=7)
    events = [json.loads(raw) for topic, raw in floor() if topic == "rounds"]
    types = {e["type"] for e in events}
    assert {"round.cancelled", "round.corrected", "round.voided"} <= types
    opened = {e["round_id"] for e in events if e["type"] == "round.opened"}
    gone = {e["round_id"] for e in events if e["type"] in ("round.cancelled", "round.voided")}
    final = {
        e["round_id"]: e.get("dice") or e.get("discs")
        for e in events
        if e["type"] in ("round.result", "round.corrected")
    }
    corrected = {e["round_id"] for e in events if e["type"] == "round.corrected"} - gone
    with engine.connect() as db:
        rows = db.execute(schema.integrity_rounds.select()).all()
    counted = {row.round_id: json.loads(row.outcome) for row in rows if row.outcome is not None}
    assert {row.round_id for row in rows} == opened - gone
    assert counted == {r: outcome for r, outcome in final.items() if r not in gone}
    assert corrected and corrected <= counted.keys()
    [(_, offline)] = ask(engine, "/integrity?scope=table&window=1000000")
    assert sum(f["rounds"] for f in offline if f["test"] != "totals") == len(counted)


def test_the_metric_gives_each_tests_verdict_and_the_alarm_of_the_loaded_dealer(
    engine: Engine,
) -> None:
    project_all(Store(engine), commit_inputs(floor(), batch=40), seed=4)
    [(status, text), (_, found)] = ask(engine, "/metrics", "/integrity")
    assert status == 200
    levels = {"ok": 0, "too_few": 0, "watch": 1, "alarm": 2}
    samples = [
        f'croupier_read_integrity_verdict{{scope="{f["scope"]}",id="{f["id"]}",'
        f'game="{f["game"]}",test="{f["test"]}"}} {levels[f["verdict"]]}'
        for f in found
    ]
    lines = text.splitlines()
    start = lines.index("# TYPE croupier_read_integrity_verdict gauge") + 1
    assert lines[start : start + len(samples)] == samples
    alarm = (
        'croupier_read_integrity_verdict{scope="dealer",id="D03",game="thai-hilo",test="faces"} 2'
    )
    assert alarm in lines
    assert sum(line.endswith(" 2") for line in samples) == 1


def test_the_integrity_tests_need_a_token_granting_report_read(engine: Engine) -> None:
    asked = ask(engine, "/integrity", scope=None)
    asked += ask(engine, "/integrity", scope="history:read")
    asked += ask(engine, "/integrity", scope="report:read")
    assert [status for status, _ in asked] == [401, 403, 200]
    assert asked[0][1]["error"] == "unauthorized" and asked[1][1]["error"] == "forbidden"
    assert asked[2][1] == []


def test_a_window_under_100_or_an_unknown_scope_or_game_is_refused(engine: Engine) -> None:
    asked = ask(
        engine,
        "/integrity?window=99",
        "/integrity?window=100",
        "/integrity?scope=croupier",
        "/integrity?game=roulette",
        "/integrity?window=x",
    )
    assert [status for status, _ in asked] == [422, 200, 422, 422, 422]
    assert asked[0][1]["problems"][0].startswith("window: ")


def test_the_migration_fills_the_tables_windows_from_the_rounds_already_there(
    engine: Engine, tmp_path: Path
) -> None:
    """A database projected before it kept the counting states: its tables' figures are whole
    (its timelines never kept the dealers and shakers)."""
    path = _written(tmp_path)
    project_all(Store(engine), commit_inputs(floor(), batch=40), seed=4)
    with engine.begin() as db:
        db.execute(delete(schema.integrity_rounds))  # as if projected before
    cfg = config()
    with engine.begin() as connection:
        cfg.attributes["connection"] = connection
        command.downgrade(cfg, "0008")
    assert current(engine) == "0008"

    upgrade(engine)

    [(_, found)] = ask(engine, "/integrity")
    assert found == [f for f in cli(path) if f["scope"] == "table"]


def test_the_live_figures_equal_the_replays_whatever_the_batches(engine: Engine) -> None:
    """Another interleaving of the topics and other batch cuts: the same figures."""
    inputs = floor()[:3000]
    project_all(Store(engine), commit_inputs(inputs, batch=13), seed=11)
    [(_, found)] = ask(engine, "/integrity?window=100")
    offline = findings([raw for _, raw in inputs], window=100, horizon=DEFAULT_HORIZON)
    assert found == [msgspec.to_builtins(f) for f in offline]


def test_the_metric_is_tested_again_once_a_batch_has_been_projected(engine: Engine) -> None:
    committed = commit_inputs(floor(), batch=40)
    rng = random.Random(3)
    messages = shuffled(committed, rng)
    half = len(messages) // 2
    reads = Reads(engine)
    project(Store(engine), messages[:half], rng)
    before = reads.verdicts()
    assert before == reads.integrity() != []
    with engine.begin() as db:  # no batch: the positions stay, and so do the verdicts
        db.execute(delete(schema.integrity_rounds))
    assert reads.verdicts() == before and reads.integrity() == []

    project(Store(engine), messages[half:], rng)

    assert reads.verdicts() == reads.integrity() != before
