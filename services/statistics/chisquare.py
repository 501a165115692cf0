"""Pearson's chi-square test of counts against a distribution: the statistic, exact in fractions
and rounded once, and its p-value from the chi-square distribution (pure; closed forms for whole
degrees of freedom, no numerical library)."""

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
    """Q(x; df) = P(X >= x) for X chi-square with `df` degrees of freedom.

    Q(x; 1) = erfc(sqrt(x/2)) and Q(x; 2) = exp(-x/2); each two degrees more add
    (x/2)^(k/2) exp(-x/2) / Gamma(k/2 + 1) (k the degrees before), a positive term, taken in
    logarithms so that none overflows: the tail stays exact to a few units in the last place
    down to the smallest float, where it becomes 0.
    """
    if df < 1:
        raise ValueError("degrees of freedom are at least 1")
    if math.isnan(x):
        raise ValueError("x is not a number")
    half = x / 2
    if half <= 0:  # x <= 0, or so small that half of it is 0
        return 1.0
    if df % 2:
        q, k = math.erfc(math.sqrt(half)), 1
    else:
        q, k = 0.0, 0
    log_half = math.log(half)
    while k < df:
        q += math.exp(k / 2 * log_half - half - math.lgamma(k / 2 + 1))
        k += 2
    return min(q, 1.0)
