"""Bets still waiting for their round's fate, with their age (pure: both clocks are inputs)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

import msgspec

from schemas.events import BetPlaced


class PendingBet(msgspec.Struct, frozen=True, kw_only=True):
    """A confirmed bet without a decision yet; ages in seconds, oldest first in a report.

    `age_s` is measured against the newest `at` of the input (the stream's own clock), so it means
    the same on every replay; `wall_age_s` against the clock of the machine that ran the audit.
    """

    bet_id: str
    table_id: str
    round_id: str
    player_id: str
    stake: int
    currency: str
    at: str
    age_s: float
    wall_age_s: float


def pending(
    waiting: Iterable[BetPlaced], newest: datetime | None, now: datetime
) -> list[PendingBet]:
    """Every waiting bet with its ages, oldest first (ties by bet_id)."""
    bets = []
    for bet in waiting:
        reference = newest if newest is not None and newest > bet.at else bet.at
        bets.append(
            PendingBet(
                bet_id=bet.bet_id,
                table_id=bet.table_id,
                round_id=bet.round_id,
                player_id=bet.player_id,
                stake=bet.stake,
                currency=bet.currency,
                at=bet.at.isoformat().replace("+00:00", "Z"),
                age_s=(reference - bet.at).total_seconds(),
                wall_age_s=(now - bet.at).total_seconds(),
            )
        )
    bets.sort(key=lambda b: (-b.age_s, b.bet_id))
    return bets
