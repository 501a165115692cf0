"""A round's life cycle (contract sections 2 and 3a): the round events each phase accepts.

An opened round closes for bets, then is decided by a result or a cancellation; until it is
decided it may be suspended and resumed, and while closed reshaken. No result comes while it is
suspended, and betting does not close. A round with a result may be corrected to another outcome,
and voided; a void is final. The result and each correction carry dice, or discs for xocdia.
An event the life cycle forbids changes nothing.
"""

from __future__ import annotations

from typing import assert_never

from schemas.events import (
    BettingClosed,
    Dice,
    Discs,
    RoundCancelled,
    RoundCorrected,
    RoundEvent,
    RoundOpened,
    RoundReshaken,
    RoundResult,
    RoundResumed,
    RoundSuspended,
    RoundVoided,
)
from services.games import Outcome, odds_board
from services.settlement import decisions
from services.settlement.rounds import FINAL, Correction, OddsBoard, Round


def transition(rnd: Round, event: RoundEvent) -> str | None:
    """Apply a round event to an opened round, or say why the life cycle forbids it."""
    final = rnd.phase in FINAL
    match event:
        case RoundOpened():
            return "round.opened for a round that is already open"
        case BettingClosed(last_seq=last_seq):
            if rnd.phase != "open" or rnd.suspensions:
                return f"round.betting_closed while the round is {_state(rnd)}"
            rnd.phase = "closed"
            rnd.last_seq = last_seq
        case RoundSuspended():
            if final:
                return f"round.suspended after the round is {rnd.phase}"
            rnd.suspensions += 1
        case RoundResumed():
            if final or not rnd.suspensions:
                return f"round.resumed while the round is {_state(rnd)}"
            rnd.suspensions -= 1
        case RoundReshaken():
            if rnd.phase != "closed":
                return f"round.reshaken while the round is {_state(rnd)}"
        case RoundResult(dice=dice, discs=discs, at=at):
            if rnd.phase != "closed" or rnd.suspensions:
                return f"round.result while the round is {_state(rnd)}"
            outcome = _outcome(rnd.game, dice, discs, "result")
            if isinstance(outcome, str):
                return outcome
            rnd.phase = "result"
            rnd.fate_at = at
            rnd.result = decisions.result(rnd, dice, discs)
        case RoundCancelled(at=at):
            if final:
                return f"round.cancelled after the round is {rnd.phase}"
            rnd.phase = "cancelled"
            rnd.fate_at = at
        case RoundCorrected(dice=dice, discs=discs):
            if rnd.phase != "result":
                return f"round.corrected while the round is {_state(rnd)}"
            outcome = _outcome(rnd.game, dice, discs, "correction")
            if isinstance(outcome, str):
                return outcome
            if outcome == rnd.outcome:
                return f"round.corrected to the outcome the round already has ({list(outcome)})"
            _amend(rnd, event, dice, discs, odds_board(rnd.game, outcome))
        case RoundVoided():
            if rnd.phase != "result":
                return f"round.voided while the round is {_state(rnd)}"
            rnd.phase = "voided"
            _amend(rnd, event, None, None, None)
        case _:
            assert_never(event)
    return None


def _outcome(game: str, dice: Dice | None, discs: Discs | None, what: str) -> Outcome | str:
    """The outcome a result or a correction gives a round of the game, or why it gives none."""
    need = "discs" if game == "xocdia" else "dice"
    outcome = discs if game == "xocdia" else dice
    if outcome is None:
        return f"{need}: a {game} round's {what} needs {need}"
    return outcome


def _amend(
    rnd: Round,
    event: RoundCorrected | RoundVoided,
    dice: Dice | None,
    discs: Discs | None,
    odds: OddsBoard | None,
) -> None:
    rnd.corrections.append(
        Correction(
            n=len(rnd.corrections) + 1,
            dice=dice,
            discs=discs,
            odds=odds,
            reason=event.reason,
            authorized_by=event.authorized_by,
            at=event.at,
        )
    )


def _state(rnd: Round) -> str:
    names = {"open": "open for bets", "closed": "closed for bets"}
    state = names.get(rnd.phase, rnd.phase)
    return f"{state} and suspended" if rnd.suspensions else state
