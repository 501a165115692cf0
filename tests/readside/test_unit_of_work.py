"""A batch's unit of work on each database: its writes and its positions commit together, once,
or not at all."""

from __future__ import annotations

import pytest
from sqlalchemy import Engine, func, select

from services.history import schema
from services.history.projection import Changes
from services.history.queries import Reads
from services.history.store import Conflict, Store, apply
from tests.committed import Committed, commit_inputs
from tests.unit.builders import bet, sicbo_round

ROUND = commit_inputs(
    [("rounds", raw) for raw in sicbo_round([4, 5, 6], last_seq=2)]
    + [("bets", bet(1, "big", stake=100)), ("bets", bet(2, "small", stake=50))]
)
"""One decided round of table T1 with alice's two bets, as the workers commit it."""


def changes_of(committed: Committed) -> Changes:
    changes = Changes()
    for raw, timestamp in committed.topics["accepted"]:
        changes.feed("accepted", raw, timestamp)
    return changes


def counts(engine: Engine) -> dict[str, int]:
    """How many rows each table the projector writes holds."""
    tables = (schema.bets, schema.rounds, schema.steps, schema.players, schema.tables)
    with engine.connect() as db:
        found = {
            t.name: db.execute(select(func.count()).select_from(t)).scalar_one() for t in tables
        }
        found["counters"] = db.execute(
            select(func.count()).select_from(schema.counters)
        ).scalar_one()
        found["report_money"] = db.execute(
            select(func.count()).select_from(schema.report_money)
        ).scalar_one()
    return found


EMPTY = {
    "bets": 0,
    "rounds": 0,
    "steps": 0,
    "players": 0,
    "tables": 0,
    "counters": 0,
    "report_money": 0,
}


def test_a_failure_after_the_writes_rolls_back_rows_counters_and_positions(engine: Engine) -> None:
    store = Store(engine)
    store.begin_at({("accepted", 0): 0, ("accepted", 1): 0})
    moves = {("accepted", 0): (0, len(ROUND.topics["accepted"])), ("accepted", 1): (0, 4)}
    with pytest.raises(ZeroDivisionError), store.unit(moves) as uow:
        apply(uow, store.prepare(changes_of(ROUND)))
        assert uow.counts[("croupier_read_rounds", "")] == 1  # written, not committed
        _ = 1 // 0
    assert counts(engine) == EMPTY
    assert store.positions() == {("accepted", 0): 0, ("accepted", 1): 0}
    # The same batch then commits whole on the same connections (their staging tables, made in
    # the transaction rolled back, are made again).
    store.write(changes_of(ROUND), moves)
    found = counts(engine)
    assert found.pop("counters") > 0
    assert found == {
        "bets": 2,
        "rounds": 1,
        "steps": len(sicbo_round([4, 5, 6], last_seq=2)),
        "players": 1,
        "tables": 1,
        "report_money": 1,
    }
    assert store.positions() == {("accepted", 0): moves[("accepted", 0)][1], ("accepted", 1): 4}


def test_a_conflict_on_one_partition_moves_none_and_writes_nothing(engine: Engine) -> None:
    store = Store(engine)
    store.begin_at({("accepted", 0): 0, ("rejected", 0): 7})
    stale = {("accepted", 0): (0, 3), ("rejected", 0): (6, 9)}  # rejected[0] is at 7, not 6
    with pytest.raises(Conflict, match=r"1 of the 2 partitions"):
        store.write(changes_of(ROUND), stale)
    assert counts(engine) == EMPTY
    assert store.positions() == {("accepted", 0): 0, ("rejected", 0): 7}


def test_a_committed_batch_moves_its_positions_once(engine: Engine) -> None:
    store = Store(engine)
    store.begin_at({("accepted", 0): 0})
    n = len(ROUND.topics["accepted"])
    store.write(changes_of(ROUND), {("accepted", 0): (0, n)})
    before = counts(engine)
    counters = Reads(engine).counters()
    for _ in range(2):  # the same batch again, as a projector that read the old positions would
        with pytest.raises(Conflict):
            store.write(changes_of(ROUND), {("accepted", 0): (0, n)})
    assert store.positions() == {("accepted", 0): n}
    assert counts(engine) == before and Reads(engine).counters() == counters
    store.write(Changes(), {("accepted", 0): (n, n + 1)})  # from where it stands: moves on
    assert store.positions() == {("accepted", 0): n + 1}
