"""Deciding a bet (contract section 3): the first row of the decision table that applies.

A bet of a cancelled round is refunded; of a round with a result, it is refunded when it came
after betting closed (its seq past the round's last_seq) or is no wager of the round's game, and
settled otherwise: paid its stake back plus its odds on the result, all in minor units.
"""

from __future__ import annotations

from typing import assert_never

from msgspec.structs import replace

from schemas.events import BetPlaced, Dice, Discs
from schemas.records import Refund, RefundReason, Settlement
from services.games import odds_board, pay
from services.settlement.ids import REFUND, SETTLEMENT
from services.settlement.rounds import (
    Cancelled,
    Decided,
    OddsBoard,
    Result,
    Resulted,
    Round,
    Settled,
    Voided,
    outcome_of,
)


def decide(life: Decided, bet: BetPlaced) -> Settlement | Refund:
    """The record that decides a bet of a decided round."""
    match life:
        case Settled() | Voided():
            return settle(life, bet)
        case Cancelled():
            return refund(life, bet, "round_cancelled")
        case _:
            assert_never(life)


def settle(life: Resulted, bet: BetPlaced) -> Settlement | Refund:
    """The record that decides a bet of a round with a result: refunded when it came after
    betting closed or is no wager of the round's game, else settled on the result."""
    if bet.seq > life.last_seq:
        return refund(life, bet, "late_bet")
    kind = bet.kind
    pick = bet.pick
    odds = life.result.odds.get((kind, pick))
    if odds is None:
        return refund(life, bet, "invalid_bet")
    bet_id = bet.bet_id
    stake = bet.stake
    return replace(
        life.result.settlement,
        settlement_id=SETTLEMENT + bet_id,
        bet_id=bet_id,
        player_id=bet.player_id,
        kind=kind,
        pick=pick,
        stake=stake,
        currency=bet.currency,
        result=odds[0],
        payout=pay(stake, odds),
    )


def result(
    rnd: Round,
    game: str,
    fate_at: str,
    dice: Dice | None,
    discs: Discs | None,
    odds: OddsBoard | None = None,
) -> Result:
    """What the round's result (of the game, at fate_at) fixes for its bets: `odds` when given,
    else every wager's odds on the outcome."""
    if odds is None:
        outcome = outcome_of(dice, discs)
        assert outcome is not None, "a result carries dice or discs"
        odds = odds_board(game, outcome)
    shared = Settlement(
        v=1,
        settlement_id="",
        bet_id="",
        round_id=rnd.round_id,
        table_id=rnd.table_id,
        player_id="",
        game=game,
        kind="",
        pick=(),
        stake=0,
        currency="",
        result="lose",
        payout=0,
        dice=dice,
        discs=discs,
        at=fate_at,
    )
    return Result(dice, discs, odds, shared)


def refund(life: Decided | Resulted, bet: BetPlaced, reason: RefundReason) -> Refund:
    """A bet's stake back, as its round's fate (cancelled) or its own (late, invalid) says."""
    return Refund(
        v=1,
        refund_id=REFUND + bet.bet_id,
        bet_id=bet.bet_id,
        round_id=bet.round_id,
        table_id=bet.table_id,
        player_id=bet.player_id,
        amount=bet.stake,
        currency=bet.currency,
        reason=reason,
        at=life.fate_at,
    )
