"""Deciding a bet (contract section 3): the first row of the decision table that applies.

A bet of a cancelled round is refunded; of a round with a result, it is refunded when it came
after betting closed (its seq past the round's last_seq) or is no wager of the round's game, and
settled otherwise: paid its stake back plus its odds on the result, all in minor units.
"""

from __future__ import annotations

from msgspec.structs import replace

from schemas.events import BetPlaced, Dice, Discs
from schemas.records import Refund, RefundReason, Settlement
from services.games import odds_board, pay
from services.settlement.ids import REFUND, SETTLEMENT
from services.settlement.rounds import OddsBoard, Result, Round, outcome_of


def decide(rnd: Round, bet: BetPlaced) -> Settlement | Refund:
    """The record that decides a bet of a decided round."""
    result = rnd.result
    if result is None:
        return refund(rnd, bet, "round_cancelled")
    if bet.seq > rnd.last_seq:
        return refund(rnd, bet, "late_bet")
    kind = bet.kind
    pick = bet.pick
    odds = result.odds.get((kind, pick))
    if odds is None:
        return refund(rnd, bet, "invalid_bet")
    bet_id = bet.bet_id
    stake = bet.stake
    return replace(
        result.settlement,
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
    rnd: Round, dice: Dice | None, discs: Discs | None, odds: OddsBoard | None = None
) -> Result:
    """What the round's result fixes for its bets, the round's game and fate_at set: `odds`
    when given, else every wager's odds on the outcome."""
    if odds is None:
        outcome = outcome_of(dice, discs)
        assert outcome is not None, "a result carries dice or discs"
        odds = odds_board(rnd.game, outcome)
    shared = Settlement(
        v=1,
        settlement_id="",
        bet_id="",
        round_id=rnd.round_id,
        table_id=rnd.table_id,
        player_id="",
        game=rnd.game,
        kind="",
        pick=(),
        stake=0,
        currency="",
        result="lose",
        payout=0,
        dice=dice,
        discs=discs,
        at=rnd.fate_at,
    )
    return Result(dice, discs, odds, shared)


def refund(rnd: Round, bet: BetPlaced, reason: RefundReason) -> Refund:
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
        at=rnd.fate_at,
    )
