"""Corrections and voids after a result (contract section 3a): what each settled bet is owed.

Pure. A settled bet's payout after the first k corrections of its round is a function of the bet
and of those corrections alone, so a bet read after some corrections gets exactly the records of
one read before them: its settlement against the first result, then one adjustment for each
correction or void that changed its payout. A void pays the stake back.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

from schemas.events import BetPlaced
from schemas.records import AdjustedResult, Adjustment, Settlement
from services.games import pay
from services.settlement.decisions import settle
from services.settlement.ids import ADJUSTMENT, SETTLEMENT
from services.settlement.rounds import Correction, Resulted

VOID: Final = "void"


def payout(life: Resulted, bet: BetPlaced, corrections: int) -> tuple[AdjustedResult, int]:
    """What a settled bet's records pay after the round's first `corrections` corrections."""
    board = life.corrections[corrections - 1].odds if corrections else life.result.odds
    if board is None:
        return (VOID, bet.stake)
    odds = board[(bet.kind, bet.pick)]
    return (odds[0], pay(bet.stake, odds))


def settled(life: Resulted, bet: BetPlaced) -> bool:
    """A bet its round's result settled (not refunded as late or invalid): only those adjust."""
    return isinstance(settle(life, bet), Settlement)


def adjustments(life: Resulted, bet: BetPlaced, start: int) -> Iterator[Adjustment]:
    """The adjustments of a settled bet for the round's corrections from index `start` on."""
    previous = payout(life, bet, start)[1]
    for k in range(start, len(life.corrections)):
        result, paid = payout(life, bet, k + 1)
        if paid != previous:
            yield _adjustment(bet, life.corrections[k], result, previous, paid)
        previous = paid


def _adjustment(
    bet: BetPlaced, c: Correction, result: AdjustedResult, previous: int, paid: int
) -> Adjustment:
    return Adjustment(
        v=1,
        adjustment_id=f"{ADJUSTMENT}{c.n}:{bet.bet_id}",
        settlement_id=SETTLEMENT + bet.bet_id,
        bet_id=bet.bet_id,
        round_id=bet.round_id,
        table_id=bet.table_id,
        player_id=bet.player_id,
        currency=bet.currency,
        n=c.n,
        cause="void" if c.odds is None else "correction",
        result=result,
        previous_payout=previous,
        payout=paid,
        delta=paid - previous,
        dice=c.dice,
        discs=c.discs,
        reason=c.reason,
        authorized_by=c.authorized_by,
        at=c.at,
    )
