"""Pearson's chi-square test of counts against a distribution: the statistic, exact in fractions
and rounded once, and its p-value from the chi-square distribution (SciPy's, pure)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction


def statistic(observed: Sequence[int], probabilities: Sequence[Fraction]) -> float:
    """Pearson's sum of (O - E)^2 / E over the classes, E = n P with n the total count: computed
    in fractions, so that every reader of the same counts gets the same float."""
    if len(observed) != len(probabilities):
        raise ValueError("one probability per class")
    if sum(probabilities) != 1 or min(probabilities) <= 0:
        raise ValueError("the probabilities must be positive and sum to 1")
    n = sum(observed)
    if n <= 0:
        raise ValueError("no count to test")
    total = Fraction(0)
    for count, p in zip(observed, probabilities, strict=True):
        expected = n * p
        total += (count - expected) ** 2 / expected
    return float(total)


def survival(x: float, df: int) -> float:
    """Q(x; df) = P(X >= x) for X chi-square with `df` degrees of freedom: SciPy's `chi2.sf`
    (imported on first use: `scipy.stats` takes a second to load, which no other command pays)."""
    from scipy.stats import chi2  # type: ignore[import-untyped]

    if df < 1:
        raise ValueError("degrees of freedom are at least 1")
    if math.isnan(x):
        raise ValueError("x is not a number")
    return float(chi2.sf(x, df))
