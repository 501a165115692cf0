"""What a wallet credits for a record: the settlement's payout or the refunded stake (pure)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, assert_never

import msgspec

from schemas.records import Refund, Settlement

_RECORDS: Final = msgspec.json.Decoder(Settlement | Refund)


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
    """The credit a settlement or refund record carries; msgspec.DecodeError for anything else."""
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
        case _:
            assert_never(record)
