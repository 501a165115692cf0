"""The projector reads in step across partitions: the ones furthest behind in Kafka time first."""

from __future__ import annotations

from collections.abc import Iterator

from hypothesis import given
from hypothesis import strategies as st

from services.history.pacing import bound, due, ready


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
    live = [c for p in clocks if p not in idle and (c := clocks[p]) is not None]
    if live:
        assert all(p not in idle for p in chosen)
        ahead = [p for p in chosen if (c := clocks[p]) is not None and c > min(live) + slack]
        assert ahead == []
        behind = min(p for p in clocks if p not in idle and clocks[p] == min(live))
        assert behind in chosen


def test_records_are_fed_up_to_the_slack_past_the_partition_furthest_behind() -> None:
    clocks = {"accepted-0": 1_000, "settlements-0": 5_000, "settlements-1": 1_050}
    assert bound(clocks, idle=[], slack_ms=20) == 1_020
    assert bound(clocks, idle=["accepted-0"], slack_ms=20) == 1_070


def test_nothing_is_fed_while_a_partition_with_more_to_read_was_never_read() -> None:
    clocks: dict[str, int | None] = {"a": None, "b": 9_000}
    assert bound(clocks, idle=[]) == float("-inf")
    assert bound(clocks, idle=["a"], slack_ms=0) == 9_000


def test_everything_is_fed_when_no_partition_has_more_to_read() -> None:
    assert bound({"a": 1, "b": None}, idle=["a", "b"]) == float("inf")


def test_a_partition_is_fed_in_offset_order_up_to_its_first_record_past_the_bound() -> None:
    assert ready([10, 12, 30, 11, 40], limit=20) == 2
    assert ready([30, 10], limit=20) == 0
    assert ready([], limit=20) == 0
    assert ready([1, 2], limit=float("inf")) == 2


def test_a_lazy_iterable_is_read_no_further_than_the_first_record_past_the_bound() -> None:
    seen: list[int] = []

    def timestamps() -> Iterator[int]:
        for t in (1, 2, 50, 3, 4):
            seen.append(t)
            yield t

    assert ready(timestamps(), limit=10) == 2
    assert seen == [1, 2, 50]


@given(
    st.dictionaries(st.integers(0, 20), st.lists(st.integers(0, 10_000), max_size=30), min_size=1),
    st.sets(st.integers(0, 20)),
    st.integers(0, 1_000),
)
def test_after_feeding_every_partition_due_has_nothing_left_waiting(
    read: dict[int, list[int]], idle: set[int], slack: int
) -> None:
    """What the projector relies on not to spin: with each clock the latest timestamp read, the
    records of the partitions due are all fed, however their timestamps go back."""
    clocks = {p: max(ts) if ts else None for p, ts in read.items()}
    idle = {p for p in idle if p in read and not read[p]}  # idle: nothing left waiting
    limit = bound(clocks, idle, slack)
    left = {p: ts[ready(ts, limit) :] for p, ts in read.items()}
    chosen = [p for p in due(clocks, idle, slack) if not left[p]]
    assert chosen or all(not ts for ts in left.values())
    if limit != float("-inf"):
        for p in due(clocks, idle, slack):
            assert not left[p]
