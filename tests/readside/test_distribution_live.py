"""A table's board charts its outcomes against the fair distribution (`GET
/tables/{table_id}/distribution`): the counts and fair counts of the integrity test of its table
scope, exactly those of `croupier integrity` on the same inputs, served to anyone."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

from sqlalchemy import Engine, delete, select

from services.history import schema
from services.history.integrity import Charts
from services.history.store import Store
from services.settlement.fold import DEFAULT_HORIZON
from services.settlement.replay import lines
from services.statistics.command import counted
from services.statistics.integrity import examine
from tests.committed import commit_inputs
from tests.database import project_all
from tests.readside.test_integrity_live import _written, ask, floor


def test_each_tables_distribution_is_its_integrity_tests_counts_and_fair_counts(
    engine: Engine, tmp_path: Path
) -> None:
    project_all(Store(engine), commit_inputs(floor(), batch=40), seed=3)
    rounds = list(counted(lines([str(_written(tmp_path))]), horizon=DEFAULT_HORIZON).rounds())
    tested = {
        e.finding.id: e
        for e in examine(rounds)
        if e.finding.scope == "table" and e.test in ("faces", "reds")
    }
    assert sorted(tested) == ["HL-01", "SB-01", "XD-01"]
    [(status, listed)] = ask(engine, "/tables", scope=None)
    assert status == 200
    assert [t["table_id"] for t in listed["tables"]] == sorted(tested)
    for table_id, offline in tested.items():
        [(status, found)] = ask(engine, f"/tables/{table_id}/distribution", scope=None)
        assert status == 200
        d = offline.distribution
        assert found == {
            "table_id": table_id,
            "game": offline.finding.game,
            "test": d.test,
            "window": 2000,
            "rounds": offline.finding.rounds,
            "classes": d.classes,
            "counts": d.counts,
            "expected": d.expected,
            "denominator": d.denominator,
        }
        mine = [r for r in rounds if r.table_id == table_id]
        assert found["rounds"] == len(mine) > 100
        parts = 3 * len(mine) if d.test == "faces" else len(mine)  # every die, or every round
        assert sum(found["counts"]) == parts
        assert sum(Fraction(e, found["denominator"]) for e in found["expected"]) == parts


def test_a_table_without_a_counted_round_is_404_and_a_bad_id_422(engine: Engine) -> None:
    asked = ask(
        engine, "/tables/NOPE/distribution", f"/tables/{'x' * 257}/distribution", scope=None
    )
    assert [status for status, _ in asked] == [404, 422]
    assert asked[0][1]["detail"] == "table 'NOPE' has no counted round yet (no round with a result)"


def test_a_chart_is_read_again_only_once_the_projector_has_moved(engine: Engine) -> None:
    project_all(Store(engine), commit_inputs(floor()[:3000], batch=40), seed=3)
    positions = {("rounds", 0): 1}
    charts = Charts(engine, lambda: dict(positions))
    first = charts.get("SB-01")
    assert first is not None and first.rounds > 0
    t = schema.integrity_rounds
    counted = (t.c.table_id == "SB-01") & t.c.outcome.is_not(None)
    with engine.begin() as db:  # a round the next batch voids
        newest = db.execute(select(t.c.round_id).where(counted).order_by(t.c.at.desc())).first()
        assert newest is not None
        db.execute(delete(t).where(counted, t.c.round_id == newest.round_id))
    assert charts.get("SB-01") == first  # the projector has not moved: as read
    positions[("rounds", 0)] = 2
    again = charts.get("SB-01")
    assert again is not None
    assert again.rounds == first.rounds - 1
