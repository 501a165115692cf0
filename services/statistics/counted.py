"""Which rounds the outcome integrity tests count, and with which outcome, from the round events
the fold accepted (pure).

The fold decides which events move a round (a rejected or redelivered event never reaches here:
`Fold.journal.accepted` in a replay, the `accepted` topic's journals in the live system, the
same inputs in the same order per round); this only keeps, per round, what they leave: a round
with a result counts with its last outcome, a cancelled or voided round does not count. Its
dealer and shaker are those of its `round.opened`, its place in a window its result's `at`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final, assert_never

import msgspec

from schemas.events import (
    AnyEvent,
    BetPlaced,
    BettingClosed,
    RoundCancelled,
    RoundCorrected,
    RoundOpened,
    RoundReshaken,
    RoundResult,
    RoundResumed,
    RoundSuspended,
    RoundVoided,
)
from schemas.times import utc_micros
from services.statistics.integrity import CountedRound

UNREADABLE_AT: Final = -(2**63)
"""The instant of a result whose `at` the fold accepts but no calendar holds (year 0000): it
sorts before every other, so it leaves a window first."""


class Counted:
    """The counted rounds of the accepted round events fed so far (`accept`), any interleaving
    of tables allowed: a round's own events come in its order."""

    __slots__ = ("_opened", "_rounds")

    def __init__(self) -> None:
        self._opened: dict[tuple[str, str], RoundOpened] = {}
        self._rounds: dict[tuple[str, str], CountedRound] = {}

    def accept(self, event: AnyEvent) -> None:
        """An input the fold accepted (bets and the events that move no outcome change
        nothing)."""
        key = (event.table_id, event.round_id)
        match event:
            case RoundOpened():  # opened again past the horizon: the round starts over
                self._opened[key] = event
                self._rounds.pop(key, None)
            case RoundResult(dice=dice, discs=discs, at=at):
                opened = self._opened.pop(key, None)
                outcome = dice if dice is not None else discs
                if opened is None or outcome is None:
                    return  # its opening was never read: no game, no dealer (not in a replay)
                instant = utc_micros(at)
                self._rounds[key] = CountedRound(
                    table_id=event.table_id,
                    round_id=event.round_id,
                    game=opened.game,
                    at=UNREADABLE_AT if instant is None else instant,
                    outcome=outcome,
                    dealer_id=opened.dealer_id,
                    shaker_id=opened.shaker_id,
                )
            case RoundCorrected(dice=dice, discs=discs):
                counted = self._rounds.get(key)
                outcome = dice if dice is not None else discs
                if counted is not None and outcome is not None:
                    self._rounds[key] = msgspec.structs.replace(counted, outcome=outcome)
            case RoundCancelled() | RoundVoided():
                self._rounds.pop(key, None)
                self._opened.pop(key, None)
            case (
                BettingClosed() | RoundSuspended() | RoundResumed() | RoundReshaken() | BetPlaced()
            ):
                pass
            case _:
                assert_never(event)

    def rounds(self) -> Iterator[CountedRound]:
        """Every round that counts now."""
        return iter(self._rounds.values())
