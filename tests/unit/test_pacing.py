"""The projector reads in step across partitions: the ones furthest behind in Kafka time first."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from services.history.pacing import due


def test_a_partition_ahead_of_the_one_furthest_behind_waits_for_it() -> None:
    clocks = {"accepted-0": 1_000, "settlements-0": 5_000, "settlements-1": 1_050}
    assert due(clocks, idle=[], slack_ms=100) == ["accepted-0", "settlements-1"]


def test_a_partition_with_nothing_more_to_read_holds_nobody_back() -> None:
    clocks = {"accepted-0": 1_000, "settlements-0": 5_000}
    assert due(clocks, idle=["accepted-0"], slack_ms=100) == ["settlements-0"]


def test_a_partition_never_read_is_read_with_the_ones_behind() -> None:
    clocks: dict[str, int | None] = {"a": None, "b": 9_000, "c": 1_000}
    assert due(clocks, idle=[], slack_ms=0) == ["a", "c"]


def test_when_every_partition_is_idle_all_are_read() -> None:
    clocks = {"a": 1, "b": 2}
    assert due(clocks, idle=["a", "b"]) == ["a", "b"]


@given(
    st.dictionaries(st.integers(0, 20), st.none() | st.integers(0, 10_000), min_size=1),
    st.sets(st.integers(0, 20)),
    st.integers(0, 1_000),
)
def test_some_partition_is_always_due_and_never_one_ahead_of_the_slack(
    clocks: dict[int, int | None], idle: set[int], slack: int
) -> None:
    chosen = due(clocks, idle, slack)
    assert chosen
    live = [clocks[p] for p in clocks if p not in idle and clocks[p] is not None]
    if live:
        assert all(p not in idle for p in chosen)
        assert all((c := clocks[p]) is None or c <= min(live) + slack for p in chosen)
        behind = min(p for p in clocks if p not in idle and clocks[p] == min(live))
        assert behind in chosen
