"""A round as the read side keeps it, evolved by its accepted events; times as sortable integers."""

from __future__ import annotations

from typing import assert_never

import msgspec

from schemas.events import (
    BettingClosed,
    Dice,
    Discs,
    Phase,
    RoundCancelled,
    RoundCorrected,
    RoundEvent,
    RoundOpened,
    RoundReshaken,
    RoundResult,
    RoundResumed,
    RoundSuspended,
    RoundVoided,
    type_of,
)
from schemas.times import micros, utc_micros

Key = tuple[int, str, str, int, str]
"""Where a bet sorts in its player's history: (time in µs, table_id, round_id, seq, bet_id)."""
__all__ = ["micros", "parse_micros"]


def parse_micros(text: str) -> int:
    """Microseconds since the epoch of an RFC 3339 timestamp; 0 when it cannot be read."""
    return utc_micros(text) or 0


class Step(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """One accepted event of a round's timeline, as the table published it."""

    type: str
    event_id: str
    at: str
    game: str | None = None
    last_seq: int | None = None
    reason: str | None = None
    dice: Dice | None = None
    discs: Discs | None = None
    authorized_by: str | None = None
    previous_dice: Dice | None = None
    previous_discs: Discs | None = None


class Round:
    """A round as recalled: its accepted events, its state, its outcome and its bets."""

    __slots__ = (
        "cancel_reason",
        "dice",
        "discs",
        "game",
        "last_seq",
        "phase",
        "reshakes",
        "round_id",
        "suspensions",
        "table_id",
        "timeline",
    )

    def __init__(self, table_id: str, round_id: str) -> None:
        self.table_id = table_id
        self.round_id = round_id
        self.game: str | None = None
        self.phase: Phase = "unopened"
        self.suspensions = 0
        self.reshakes = 0
        self.last_seq: int | None = None
        self.dice: Dice | None = None
        self.discs: Discs | None = None
        self.cancel_reason: str | None = None
        self.timeline: list[Step] = []

    def apply(self, event: RoundEvent) -> None:
        """Record an event the round's life cycle accepted (the settlement fold is the judge)."""
        step = Step(type=type_of(event), event_id=event.event_id, at=event.at)
        match event:
            case RoundOpened(game=game):
                self.game, self.phase = game, "open"
                step = msgspec.structs.replace(step, game=game)
            case BettingClosed(last_seq=last_seq):
                self.last_seq, self.phase = last_seq, "closed"
                step = msgspec.structs.replace(step, last_seq=last_seq)
            case RoundSuspended(reason=reason):
                self.suspensions += 1
                step = msgspec.structs.replace(step, reason=reason)
            case RoundResumed():
                self.suspensions = max(0, self.suspensions - 1)
            case RoundReshaken(reason=reason):
                self.reshakes += 1
                step = msgspec.structs.replace(step, reason=reason)
            case RoundResult(dice=dice, discs=discs):
                self.dice, self.discs, self.phase = dice, discs, "result"
                step = msgspec.structs.replace(step, dice=dice, discs=discs)
            case RoundCancelled(reason=reason):
                self.cancel_reason, self.phase = reason, "cancelled"
                step = msgspec.structs.replace(step, reason=reason)
            case RoundCorrected(dice=dice, discs=discs, reason=reason):
                step = msgspec.structs.replace(
                    step,
                    dice=dice,
                    discs=discs,
                    reason=reason,
                    authorized_by=event.authorized_by,
                    previous_dice=self.dice,
                    previous_discs=self.discs,
                )
                self.dice, self.discs = dice, discs
            case RoundVoided(reason=reason):
                self.phase = "voided"
                step = msgspec.structs.replace(
                    step,
                    reason=reason,
                    authorized_by=event.authorized_by,
                    previous_dice=self.dice,
                    previous_discs=self.discs,
                )
            case _:
                assert_never(event)
        self.timeline.append(step)
