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
from services.settlement.rounds import (
    Cancelled,
    Closed,
    Correction,
    Life,
    OddsBoard,
    Open,
    Round,
    Settled,
    Unopened,
    Voided,
)


def transition(rnd: Round, event: RoundEvent, decision: int) -> str | None:
    """Apply a round event to an opened round, or say why the life cycle forbids it; `decision`
    is the how-manieth of its table the round is if this event decides it."""
    life = rnd.life
    assert not isinstance(life, Unopened), "a round is opened before its other events"
    match event:
        case RoundOpened():
            return "round.opened for a round that is already open"
        case BettingClosed(last_seq=last_seq):
            if not isinstance(life, Open) or life.suspensions:
                return f"round.betting_closed while the round is {_state(life)}"
            rnd.life = Closed(life.game, life.ordinal, 0, last_seq)
        case RoundSuspended():
            if not isinstance(life, Open | Closed):
                return f"round.suspended after the round is {life.phase}"
            life.suspensions += 1
        case RoundResumed():
            if not isinstance(life, Open | Closed) or not life.suspensions:
                return f"round.resumed while the round is {_state(life)}"
            life.suspensions -= 1
        case RoundReshaken():
            if not isinstance(life, Closed):
                return f"round.reshaken while the round is {_state(life)}"
        case RoundResult(dice=dice, discs=discs, at=at):
            if not isinstance(life, Closed) or life.suspensions:
                return f"round.result while the round is {_state(life)}"
            outcome = _outcome(life.game, dice, discs, "result")
            if isinstance(outcome, str):
                return outcome
            result = decisions.result(rnd, life.game, at, dice, discs)
            rnd.life = Settled(
                life.game, life.ordinal, life.last_seq, decision=decision, fate_at=at, result=result
            )
        case RoundCancelled(at=at):
            if not isinstance(life, Open | Closed):
                return f"round.cancelled after the round is {life.phase}"
            closed_at = life.last_seq if isinstance(life, Closed) else None
            rnd.life = Cancelled(
                life.game, life.ordinal, life.suspensions, closed_at, decision=decision, fate_at=at
            )
        case RoundCorrected(dice=dice, discs=discs):
            if not isinstance(life, Settled):
                return f"round.corrected while the round is {_state(life)}"
            outcome = _outcome(life.game, dice, discs, "correction")
            if isinstance(outcome, str):
                return outcome
            if outcome == life.outcome:
                return f"round.corrected to the outcome the round already has ({list(outcome)})"
            _amend(life, event, dice, discs, odds_board(life.game, outcome))
        case RoundVoided():
            if not isinstance(life, Settled):
                return f"round.voided while the round is {_state(life)}"
            _amend(life, event, None, None, None)
            rnd.life = Voided(
                life.game,
                life.ordinal,
                life.last_seq,
                decision=life.decision,
                fate_at=life.fate_at,
                result=life.result,
                corrections=life.corrections,
            )
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
    life: Settled,
    event: RoundCorrected | RoundVoided,
    dice: Dice | None,
    discs: Discs | None,
    odds: OddsBoard | None,
) -> None:
    life.corrections.append(
        Correction(
            n=len(life.corrections) + 1,
            dice=dice,
            discs=discs,
            odds=odds,
            reason=event.reason,
            authorized_by=event.authorized_by,
            at=event.at,
        )
    )


_NAMES: dict[str, str] = {"open": "open for bets", "closed": "closed for bets"}


def _state(life: Life) -> str:
    state = _NAMES.get(life.phase, life.phase)
    suspended = isinstance(life, Open | Closed | Cancelled) and life.suspensions
    return f"{state} and suspended" if suspended else state
