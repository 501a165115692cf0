"""Pairing a bet's two halves within a batch (pure): its bet.placed and its committed decision.

A bet's row is made once: when its second half is read (`Pairs.joined`, final as soon as made, so
the shell encodes it while the batch is still being read), or at the end of the batch for a bet
whose other half is in another batch (`Pairs.pending`, `Pairs.parts`). The first of each half
counts; a half read again changes nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from operator import attrgetter, itemgetter
from typing import Final, assert_never

import msgspec

from schemas.events import AnyEvent, BetPlaced
from schemas.journal import Decision
from schemas.records import Adjustment, Refund, Settlement
from services.history.rows import decision_row, joined_row, placed_row
from services.history.schema import BetRow

BetKey = tuple[str, str, str]
"""A bet's table, round and id: its row's key (`bets`' primary key). The contract makes a bet id
unique across all tables; were a table ever to repeat another's, both bets are kept."""


class Decided(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """A bet's decision, read before its bet.placed, with its journal's Kafka timestamp."""

    decision: Settlement | Refund
    timestamp_ms: int


class Paired(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """Both halves of the bet were read: its row is in `Pairs.joined`."""


PAIRED: Final = Paired()
"""The one `Paired` (it holds nothing: the row is in `Pairs.joined`)."""


Half = BetPlaced | Decided | Paired
"""What `Pairs.halves` keeps of a bet: its bet.placed while its decision is not read, its
decision while its bet.placed is not, `Paired` once both are."""


@dataclass
class Pairs:
    """The bets one batch names, by key, and the rows of those read whole."""

    halves: dict[BetKey, Half] = field(default_factory=dict)
    joined: list[BetRow] = field(default_factory=list)
    """The rows of the bets whose placement and decision are both in this batch, in the order
    they became whole (each once)."""

    def place(self, inputs: Sequence[AnyEvent]) -> list[AnyEvent]:
        """Pair each bet.placed of a journal's inputs (the most of them, told apart here in one
        loop) with its decision, or keep it until that is read; the other inputs, in order."""
        halves = self.halves
        others: list[AnyEvent] = []
        for event in inputs:
            if type(event) is not BetPlaced:
                others.append(event)
                continue
            key = (event.table_id, event.round_id, event.bet_id)
            match halves.get(key):
                case None:
                    halves[key] = event
                case Decided(decision=decision, timestamp_ms=timestamp_ms):
                    halves[key] = PAIRED
                    self.joined.append(joined_row(event, decision, timestamp_ms))
                case BetPlaced() | Paired():
                    pass  # this bet's bet.placed again
                case unknown:
                    assert_never(unknown)
        return others

    def decide(
        self, decisions: Sequence[Decision], timestamp_ms: int
    ) -> tuple[list[Settlement | Refund], list[Adjustment]]:
        """Pair each settlement and refund of a journal (all committed at its Kafka timestamp)
        with its bet.placed, or keep it until that is read: those this batch reads first, and
        the adjustments."""
        halves = self.halves
        first: list[Settlement | Refund] = []
        adjustments: list[Adjustment] = []
        for decision in decisions:
            match decision:
                case Settlement() | Refund():
                    pass
                case Adjustment():
                    adjustments.append(decision)
                    continue
                case other:
                    assert_never(other)
            key = (decision.table_id, decision.round_id, decision.bet_id)
            match halves.get(key):
                case BetPlaced() as bet:
                    halves[key] = PAIRED
                    self.joined.append(joined_row(bet, decision, timestamp_ms))
                case None:
                    halves[key] = Decided(decision=decision, timestamp_ms=timestamp_ms)
                case Decided() | Paired():
                    continue  # this bet's decision again
                case half:
                    assert_never(half)
            first.append(decision)
        return first, adjustments

    def pending(self) -> list[BetRow]:
        """The rows of the bets placed in this batch and not decided in it, by key."""
        placed = [(k, v) for k, v in self.halves.items() if type(v) is BetPlaced]
        return [placed_row(bet) for _, bet in sorted(placed, key=_FIRST)]

    def parts(self) -> list[BetRow]:
        """The rows of the decisions of bets not placed in this batch (placed before, or never,
        as a late bet's refund), by key: what a decision alone tells of its bet."""
        alone = [(k, v) for k, v in self.halves.items() if type(v) is Decided]
        return [decision_row(d.decision, d.timestamp_ms) for _, d in sorted(alone, key=_FIRST)]

    @property
    def read(self) -> int:
        """How many bet.placed and decisions the batch applies (each bet's first of each)."""
        return len(self.halves) + len(self.joined)

    def rounds(self) -> set[tuple[str, str]]:
        """Every round a bet or a decision names."""
        return set(map(_KEY_ROUND, self.halves))

    def players(self) -> set[str]:
        """Every player a bet or a decision names (a whole bet's as its decision names it)."""
        named = set(map(_ROW_PLAYER, self.joined))
        for half in self.halves.values():
            match half:
                case BetPlaced(player_id=player_id):
                    named.add(player_id)
                case Decided(decision=decision):
                    named.add(decision.player_id)
                case Paired():
                    pass  # its row's, above
                case unknown:
                    assert_never(unknown)
        return named


_ROW_PLAYER: Final = attrgetter("player_id")
_FIRST: Final = itemgetter(0)
_KEY_ROUND: Final = itemgetter(0, 1)
"""A bet's table and round, of its key."""
