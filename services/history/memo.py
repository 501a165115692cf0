"""A bounded memo of a pure function of one hashable key (pure).

The projection renders a few distinct values again and again (a bet's second, its pick); each
memo here was kept because a benchmark showed it pay 5% or more of the projection's time
(docs/DESIGN.md, "Little bookkeeping a bet"). Past `size` keys it starts again empty: cheaper than
keeping an order, and a batch's keys come back within a few rows.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Final, Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")
SIZE: Final = 4096


class Memo(Generic[K, V]):
    """`function`, remembered: `memo(key)`, or `memo.known(key)` (None when not known yet), the
    dict's own lookup, for a caller that must not pay a call on the path it takes the most."""

    __slots__ = ("function", "known", "size", "values")

    def __init__(self, function: Callable[[K], V], size: int = SIZE) -> None:
        self.function = function
        self.size = size
        self.values: dict[K, V] = {}
        self.known: Final = self.values.get

    def __call__(self, key: K) -> V:
        found = self.known(key)
        if found is None:
            if len(self.values) >= self.size:
                self.values.clear()
            found = self.values[key] = self.function(key)
        return found
