"""The report from the read side's database has exactly the figures of `croupier report FILE`."""

from __future__ import annotations

import random

from alembic import command
from sqlalchemy import Engine

from services.history import report
from services.history.migrate import config, current, upgrade
from services.history.queries import Reads
from services.history.store import Store
from services.reports.command import build
from services.reports.render import as_dict
from services.simulation.streams import Profile, generate, interleave
from tests.committed import commit
from tests.database import project_all

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


def test_the_figures_kept_batch_by_batch_equal_the_report_of_every_row(engine: Engine) -> None:
    project_all(Store(engine), commit(STREAMS, seed=8), seed=9)  # other batches, other cuts
    with engine.connect() as db:
        kept, from_rows = as_dict(report.build(db)), as_dict(report.from_rows(db))
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
