"""What a wallet credits for a record: a settlement's payout, a refunded stake, or an adjustment's
delta (a debit when negative) (pure)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, assert_never

import msgspec

from schemas.records import Adjustment, Refund, Settlement

_RECORDS: Final = msgspec.json.Decoder(Settlement | Refund | Adjustment)


@dataclass(frozen=True, slots=True, kw_only=True)
class Credit:
    """One credit to a player's balance, keyed by the record id (the idempotency key)."""

    record_id: str
    kind: str
    bet_id: str
    player_id: str
    currency: str
    amount: int
    stake: int
    at: str


def credit_of(raw: bytes) -> Credit:
    """The credit a settlement, refund or adjustment carries; msgspec.DecodeError for others."""
    record = _RECORDS.decode(raw)
    match record:
        case Settlement():
            return Credit(
                record_id=record.settlement_id,
                kind="settlement",
                bet_id=record.bet_id,
                player_id=record.player_id,
                currency=record.currency,
                amount=record.payout,
                stake=record.stake,
                at=record.at,
            )
        case Refund():
            return Credit(
                record_id=record.refund_id,
                kind="refund",
                bet_id=record.bet_id,
                player_id=record.player_id,
                currency=record.currency,
                amount=record.amount,
                stake=record.amount,
                at=record.at,
            )
        case Adjustment():
            return Credit(
                record_id=record.adjustment_id,
                kind="adjustment",
                bet_id=record.bet_id,
                player_id=record.player_id,
                currency=record.currency,
                amount=record.delta,
                stake=0,
                at=record.at,
            )
        case _:
            assert_never(record)
