"""A batch's decisions summed by what the counters and the report tell apart (pure).

Each decision a batch reads first is added once, under its journal's Kafka timestamp and a key
read in place (`SettledKey`, `RefundedKey`): few distinct, so how long each waited is told once a
key and timestamp (`Sums.decided`), never once a bet.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, assert_never

from schemas.records import Refund, Settlement
from services.history.rows import micros_of

SettledKey = tuple[str, str, str, str, str, str, str, tuple[int, ...]]
"""What a settlement counts under in a batch, but for how long it waited: its result, its
report line (table, round, `at`, currency) and its wager (game, kind, pick)."""
RefundedKey = tuple[str, str, str, str, str]
"""What a refund counts under in a batch, but for how long it waited: its reason and its report
line (table, round, `at`, currency)."""
Decided = tuple[str, bool, int, str, str, str, str, str | None, str | None, tuple[int, ...] | None]
"""What a decision counts under: its outcome (a settlement's result or a refund's reason),
whether it is a settlement, the milliseconds it waited, then its report line: its table, round,
`at` and currency, and a settlement's game, kind and pick."""


@dataclass
class Sums:
    """The settlements and refunds of a batch by Kafka timestamp and key: [bets, stakes,
    payouts] (a refund's payouts 0)."""

    settled: dict[int, dict[SettledKey, list[int]]] = field(default_factory=dict)
    refunded: dict[int, dict[RefundedKey, list[int]]] = field(default_factory=dict)

    def add(self, decisions: Sequence[Settlement | Refund], timestamp_ms: int) -> None:
        """Add decisions committed at `timestamp_ms` (each a bet's first in the batch)."""
        settled = self.settled.get(timestamp_ms)
        if settled is None:
            settled = self.settled[timestamp_ms] = {}
        refunded = self.refunded.get(timestamp_ms)
        if refunded is None:
            refunded = self.refunded[timestamp_ms] = {}
        for decision in decisions:
            sums: dict[Any, list[int]]
            match decision:
                case Settlement():
                    sums = settled
                    key: tuple[Any, ...] = (  # SettledKey (spelt out: read in place, no call)
                        decision.result,
                        decision.table_id,
                        decision.round_id,
                        decision.at,
                        decision.currency,
                        decision.game,
                        decision.kind,
                        decision.pick,
                    )
                    stake = decision.stake
                    paid = decision.payout
                case Refund():
                    sums = refunded
                    key = (
                        decision.reason,
                        decision.table_id,
                        decision.round_id,
                        decision.at,
                        decision.currency,
                    )
                    stake = decision.amount
                    paid = 0
                case unknown:
                    assert_never(unknown)
            summed = sums.get(key)
            if summed is None:
                sums[key] = [1, stake, paid]
            else:
                summed[0] += 1
                summed[1] += stake
                summed[2] += paid

    @property
    def decided(self) -> dict[Decided, list[int]]:
        """The decisions summed by `Decided`: the milliseconds each waited, from the `at` of the
        round event that decided it (copied into the decision) to its commit (its Kafka
        timestamp; a clock behind reads 0), told once for each distinct key."""
        out: dict[Decided, list[int]] = {}
        for timestamp_ms, settled in self.settled.items():
            for (result, table, rnd, at, currency, game, kind, pick), sums in settled.items():
                waited = waited_ms(timestamp_ms, at)
                _add(out, (result, True, waited, table, rnd, at, currency, game, kind, pick), sums)
        for timestamp_ms, refunded in self.refunded.items():
            for (reason, table, rnd, at, currency), sums in refunded.items():
                waited = waited_ms(timestamp_ms, at)
                _add(out, (reason, False, waited, table, rnd, at, currency, None, None, None), sums)
        return out


def waited_ms(timestamp_ms: int, at: str) -> int:
    """Milliseconds from a decision's `at` to its commit at `timestamp_ms` (0 if the clocks
    say it was committed first)."""
    return max(0, timestamp_ms - micros_of(at) // 1000)


def _add(sums: dict[Decided, list[int]], key: Decided, more: list[int]) -> None:
    summed = sums.get(key)
    if summed is None:
        sums[key] = list(more)
    else:
        for n, value in enumerate(more):
            summed[n] += value
