"""Which rounds the outcome integrity tests count, and with which outcome, from the round events
the fold accepted (pure).

The fold decides which events move a round (a rejected or redelivered event never reaches here:
`Fold.journal.accepted` in a replay, the `accepted` topic's journals in the live system, the
same inputs in the same order per round); this only keeps, per round, what they leave: a round
with a result counts with its last outcome, a cancelled or voided round does not count. Its
dealer and shaker are those of its `round.opened`, its place in a window its result's `at`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
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


class Opening(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """A round opened and without a result yet: what its result will count with."""

    table_id: str
    round_id: str
    game: str
    dealer_id: str | None = None
    shaker_id: str | None = None


State = Opening | CountedRound
"""What a round's accepted events leave: an opening waiting for its result, or a round that
counts (a round that does not count, or was never opened, has no state)."""


def step(state: State | None, event: AnyEvent) -> State | None:
    """A round's state after one more of its accepted events (bets and the events that move no
    outcome change nothing)."""
    match event:
        case RoundOpened():  # opened again past the horizon: the round starts over
            return Opening(
                table_id=event.table_id,
                round_id=event.round_id,
                game=event.game,
                dealer_id=event.dealer_id,
                shaker_id=event.shaker_id,
            )
        case RoundResult(dice=dice, discs=discs, at=at):
            outcome = dice if dice is not None else discs
            if not isinstance(state, Opening):
                return state  # its opening was never read: no game, no dealer (not in a replay)
            if outcome is None:
                return None
            instant = utc_micros(at)
            return CountedRound(
                table_id=event.table_id,
                round_id=event.round_id,
                game=state.game,
                at=UNREADABLE_AT if instant is None else instant,
                outcome=outcome,
                dealer_id=state.dealer_id,
                shaker_id=state.shaker_id,
            )
        case RoundCorrected(dice=dice, discs=discs):
            outcome = dice if dice is not None else discs
            if isinstance(state, CountedRound) and outcome is not None:
                return msgspec.structs.replace(state, outcome=outcome)
            return state
        case RoundCancelled() | RoundVoided():
            return None
        case BettingClosed() | RoundSuspended() | RoundResumed() | RoundReshaken() | BetPlaced():
            return state
        case _:
            assert_never(event)


RoundKey = tuple[str, str]
"""A round: (table_id, round_id)."""


class Counted:
    """The counted rounds of the accepted round events fed so far (`accept`), any interleaving
    of tables allowed: a round's own events come in its order. It may start from the states a
    store kept of some rounds (`known`): the read side feeds each batch's events to the states
    its database holds of their rounds."""

    __slots__ = ("_states",)

    def __init__(self, known: Iterable[State] = ()) -> None:
        self._states: dict[RoundKey, State] = {(s.table_id, s.round_id): s for s in known}

    def accept(self, event: AnyEvent) -> None:
        """An input the fold accepted."""
        key = (event.table_id, event.round_id)
        state = step(self._states.get(key), event)
        if state is None:
            self._states.pop(key, None)
        else:
            self._states[key] = state

    def state(self, key: RoundKey) -> State | None:
        """What the events fed so far leave of a round."""
        return self._states.get(key)

    def rounds(self) -> Iterator[CountedRound]:
        """Every round that counts now."""
        return (s for s in self._states.values() if isinstance(s, CountedRound))
