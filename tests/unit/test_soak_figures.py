"""The soak's pure parts: its seeded fault schedule and its verdict on flatness."""

from __future__ import annotations

from collections import Counter

import pytest

from tests.soak.faults import KINDS, schedule
from tests.soak.report import Series, judge, p99s
from tests.soak.stack import SMALL_NODE


def test_the_schedule_does_every_kind_once_before_any_twice_on_targets_that_exist() -> None:
    planned = schedule(7, KINDS, first=300, last=3480, every=240)
    kinds = [p.kind for p in planned]
    assert len(planned) == 14
    assert sorted(kinds[: len(KINDS)]) == sorted(KINDS)
    assert sorted(kinds[len(KINDS) :]) == sorted(KINDS)
    for n, p in enumerate(planned):
        assert 300 + n * 240 <= p.at <= 300 + n * 240 + 60
        allowed = {
            "worker": range(3),
            "projector": range(2),
            "disk-full": [SMALL_NODE],
        }.get(p.kind, range(1, 4))
        assert p.target in allowed


def test_the_same_seed_gives_the_same_schedule_and_another_seed_another() -> None:
    assert schedule(11, KINDS, 60, 600, 40) == schedule(11, KINDS, 60, 600, 40)
    assert schedule(11, KINDS, 60, 600, 40) != schedule(12, KINDS, 60, 600, 40)


def test_a_schedule_of_a_few_kinds_uses_only_those() -> None:
    kept = ("worker", "partition")
    planned = schedule(3, kept, 60, 260, 40)
    assert Counter(p.kind for p in planned) == {"worker": 3, "partition": 3}


def _series(values: list[float], **extra: object) -> Series:
    return Series(
        name="x",
        unit="MiB",
        points=[(60.0 * n, v) for n, v in enumerate(values)],
        **extra,  # type: ignore[arg-type]
    )


@pytest.mark.parametrize(
    ("values", "verdict"),
    [
        ([100, 104, 96, 100, 103, 97, 100, 104], "flat"),  # noise within 10%
        ([100, 100, 100, 100, 90, 90, 90, 90], "flat"),  # falling is flat
        ([100, 100, 100, 100, 110, 110, 110, 110], "flat"),  # exactly 10% more
        ([100, 100, 100, 100, 120, 120, 120, 120], "GROWS +20%"),
    ],
)
def test_flat_means_the_last_window_at_most_ten_percent_above_the_first(
    values: list[float], verdict: str
) -> None:
    [judged] = judge([_series(values)], warmup=0, end=420, window=180)
    assert judged.first == pytest.approx(sum(values[:4]) / 4)
    assert judged.last == pytest.approx(sum(values[4:]) / 4)
    assert judged.verdict == verdict


def test_a_rise_under_the_floor_is_noise_of_small_numbers() -> None:
    [judged] = judge([_series([2, 2, 2, 2, 4, 4, 4, 4], floor=5.0)], 0, 420, 180)
    assert judged.verdict == "flat"
    [judged] = judge([_series([2, 2, 2, 2, 8, 8, 8, 8], floor=5.0)], 0, 420, 180)
    assert judged.verdict == "GROWS +300%"


def test_a_figure_not_judged_reports_its_growth_a_minute() -> None:
    series = _series([10, 10, 10, 10, 40, 40, 40, 40], judged=False, why="history")
    [judged] = judge([series], warmup=0, end=420, window=180)
    # 30 MiB more over the 240 s between the two windows' starts
    assert judged.verdict == "+7.50 MiB/min, not judged: history"


def test_the_warm_up_is_left_out_of_the_first_window() -> None:
    [judged] = judge([_series([900, 100, 100, 100, 100, 100])], warmup=60, end=300, window=120)
    assert judged.first == 100
    assert judged.verdict == "flat"


def test_p99_is_taken_per_bucket() -> None:
    latencies = [(float(t), 0.1) for t in range(59)] + [(59.0, 9.0)]
    latencies += [(60.0 + t, 0.2) for t in range(60)]
    [(at0, first), (at1, second)] = p99s(latencies, bucket=60)
    assert (at0, at1) == (30.0, 90.0)
    assert 0.1 < first <= 9.0  # the one slow settlement of 60 lifts the 99th percentile
    assert second == pytest.approx(0.2)


def test_a_figure_is_judged_only_from_when_it_can_be_steady() -> None:
    rising_then_flat = [10, 20, 30, 40, 50, 50, 51, 50, 50, 51, 50]
    steady = _series(rising_then_flat, after=240.0, why="filling")
    [judged] = judge([steady], warmup=60, end=600, window=600)
    assert judged.first == pytest.approx(50.25)  # 240 s to 420 s
    assert judged.verdict == "flat"
    [early] = judge([_series(rising_then_flat, after=540.0, why="filling")], 60, 600, 600)
    # from 20 MiB at 60 s to 50 at 600 s; from 540 s, too short a steady part to judge
    assert early.verdict == "+3.33 MiB/min, not judged: steady only after 9 min (filling)"
