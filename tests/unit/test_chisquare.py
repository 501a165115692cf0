"""The chi-square statistic and its p-value: published table values, closed forms, properties."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from services.statistics.chisquare import statistic, survival

ULPS = 4 * 2.0**-52

# Critical values of the chi-square distribution as printed in the NIST/SEMATECH e-Handbook of
# Statistical Methods, table 1.3.6.7.4 (upper tail): (df, x, the probability of X >= x).
TABLE = [
    (1, 3.841, 0.05),
    (1, 10.828, 0.001),
    (2, 5.991, 0.05),
    (3, 7.815, 0.05),
    (4, 9.488, 0.05),
    (4, 13.277, 0.01),
    (4, 18.467, 0.001),
    (5, 11.070, 0.05),
    (5, 15.086, 0.01),
    (5, 20.515, 0.001),
    (10, 23.209, 0.01),
    (11, 19.675, 0.05),
    (11, 24.725, 0.01),
    (11, 31.264, 0.001),
]


@pytest.mark.parametrize(("df", "x", "p"), TABLE)
def test_the_p_value_at_a_tabulated_critical_value_is_the_tabulated_probability(
    df: int, x: float, p: float
) -> None:
    assert survival(x, df) == pytest.approx(p, rel=1e-3)


@pytest.mark.parametrize("df", [1, 2, 3, 4, 5, 11, 40])
def test_q_of_zero_is_one_for_every_degree_of_freedom(df: int) -> None:
    assert survival(0.0, df) == 1.0


def test_two_degrees_of_freedom_are_an_exponential_tail() -> None:
    for x in (0.5, 3.0, 20.0, 200.0):
        assert survival(x, 2) == pytest.approx(math.exp(-x / 2), rel=1e-12)


def test_a_tail_far_beyond_any_table_stays_positive_then_reaches_zero() -> None:
    assert 0 < survival(300.0, 5) < 1e-60
    assert survival(1e6, 5) == 0.0


@given(
    x=st.floats(min_value=0.0, max_value=500.0),
    dx=st.floats(min_value=1e-6, max_value=50.0),
    df=st.integers(min_value=1, max_value=30),
)
def test_the_p_value_falls_as_the_statistic_grows_and_rises_with_the_degrees(
    x: float, dx: float, df: int
) -> None:
    """Up to the rounding of the last few bits (a sum of terms near 1)."""
    q = survival(x, df)
    assert 0.0 <= q <= 1.0
    assert survival(x + dx, df) <= q + ULPS
    assert survival(x, df + 1) >= q - ULPS


def _density(t: float, df: int) -> float:
    k = df / 2
    return math.exp((k - 1) * math.log(t) - t / 2 - k * math.log(2) - math.lgamma(k))


@given(x=st.floats(min_value=0.05, max_value=60.0), df=st.integers(min_value=2, max_value=12))
def test_the_p_value_is_the_integral_of_the_density_beyond_the_statistic(x: float, df: int) -> None:
    """Simpson's rule over [x, x + 400], the density of chi-square with df degrees of freedom."""
    steps = 20_000
    h = 400.0 / steps
    total = _density(x, df) + _density(x + 400.0, df)
    for i in range(1, steps):
        total += (4 if i % 2 else 2) * _density(x + i * h, df)
    assert survival(x, df) == pytest.approx(total * h / 3, rel=1e-6, abs=1e-12)


def test_a_statistic_is_the_sum_of_squared_deviations_over_the_expected_counts() -> None:
    # 300 dice: 80 sixes and 44 of every other face; expected 50 each.
    # (80 - 50)^2 / 50 + 5 * (44 - 50)^2 / 50 = 18 + 3.6 = 21.6
    assert statistic([44, 44, 44, 44, 44, 80], [Fraction(1, 6)] * 6) == 21.6


def test_counts_exactly_as_expected_give_a_statistic_of_zero_and_a_p_value_of_one() -> None:
    assert statistic([10, 40, 60, 40, 10], [Fraction(n, 16) for n in (1, 4, 6, 4, 1)]) == 0.0
    assert survival(0.0, 4) == 1.0


@pytest.mark.parametrize(
    ("observed", "probabilities"),
    [
        ([1, 2], [Fraction(1, 2)] * 3),
        ([1, 2], [Fraction(1, 2), Fraction(1, 3)]),
        ([1, 2], [Fraction(1), Fraction(0)]),
        ([0, 0], [Fraction(1, 2)] * 2),
    ],
)
def test_a_statistic_needs_one_positive_probability_per_class_and_some_count(
    observed: list[int], probabilities: list[Fraction]
) -> None:
    with pytest.raises(ValueError):
        statistic(observed, probabilities)


@pytest.mark.parametrize(("x", "df"), [(1.0, 0), (float("nan"), 3)])
def test_a_p_value_needs_a_degree_of_freedom_and_a_number(x: float, df: int) -> None:
    with pytest.raises(ValueError):
        survival(x, df)


def test_a_statistic_so_small_that_half_of_it_is_zero_has_a_p_value_of_one() -> None:
    assert survival(5e-324, 5) == 1.0
