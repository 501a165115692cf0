"""A build waits, for a while, when a task's state and its committed offsets differ in a way that
ends by itself: the state behind them while a transaction is open on its partition, or ahead of
them while the offsets of its last transaction are not readable yet (their coordinator moved;
the soak saw it after a paused broker). Past PATIENCE it takes the state as it reads."""

from __future__ import annotations

import pytest

from services.settings import Settings
from services.settlement import changelog, restore, state

S = Settings()


def logs(rounds: int, bets: int) -> dict[int, changelog.Log]:
    key, value = state.position_entry(rounds, bets)
    return {0: changelog.Log(entries={key: value}, end=40)}


def committed(rounds: int | None, bets: int | None) -> dict[tuple[str, int], int | None]:
    return {("rounds", 0): rounds, ("bets", 0): bets}


@pytest.fixture(autouse=True)
def clock(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    now = [1_000.0]
    monkeypatch.setattr(restore.time, "monotonic", lambda: now[0])
    restore._unsettled_since.clear()
    return now


def test_a_state_equal_to_its_committed_offsets_is_settled() -> None:
    restore._settled(S, logs(10, 50), committed(10, 50))


def test_a_state_ahead_of_its_committed_offsets_waits_then_is_taken(clock: list[float]) -> None:
    with pytest.raises(restore.Unsettled, match="not readable yet"):
        restore._settled(S, logs(10, 52), committed(10, 50))
    clock[0] += restore.PATIENCE - 1
    with pytest.raises(restore.Unsettled):
        restore._settled(S, logs(10, 52), committed(10, 50))
    clock[0] += 2
    restore._settled(S, logs(10, 52), committed(10, 50))  # recovery.plan judges it from here


def test_offsets_that_catch_up_settle_it_and_a_later_difference_waits_again(
    clock: list[float],
) -> None:
    with pytest.raises(restore.Unsettled):
        restore._settled(S, logs(10, 52), committed(10, 50))
    clock[0] += restore.PATIENCE + 1
    restore._settled(S, logs(10, 52), committed(10, 52))
    with pytest.raises(restore.Unsettled):
        restore._settled(S, logs(12, 60), committed(12, 58))


def test_a_state_behind_waits_only_while_a_transaction_is_open_there(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    open_: list[int] = []
    monkeypatch.setattr(changelog, "open_transactions", lambda s, ends: list(open_))
    restore._settled(S, logs(10, 48), committed(10, 50))
    open_.append(0)
    with pytest.raises(restore.Unsettled, match="still open"):
        restore._settled(S, logs(10, 48), committed(10, 50))


def test_no_committed_offsets_are_left_to_the_plan() -> None:
    restore._settled(S, logs(10, 52), committed(None, None))
