"""A wallet emulator: credits settlements, refunds and adjustments once by their id, as wallets
must.

Pure: it holds balances in memory and is fed records; reading them from Kafka is the caller's job.
Balances are credits (the stake was taken when the table confirmed the bet), and adjustments'
deltas, debits included, in minor units.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final, assert_never

import msgspec

from schemas.records import Adjustment, Refund, Settlement

Account = tuple[str, str]
"""(player_id, currency)."""

Credit = Settlement | Refund | Adjustment
_CREDIT: Final = msgspec.json.Decoder(Credit)


class Wallet:
    """Balances per (player, currency); each settlement, refund or adjustment id is credited at
    most once."""

    def __init__(self) -> None:
        self.balances: dict[Account, int] = {}
        self.credited: dict[str, tuple[Account, int]] = {}
        self.conflicts: list[str] = []

    def apply(self, record: Credit) -> bool:
        """Credit a record unless its id was credited already; say whether it credited."""
        match record:
            case Settlement():
                key, amount = record.settlement_id, record.payout
            case Refund():
                key, amount = record.refund_id, record.amount
            case Adjustment():
                key, amount = record.adjustment_id, record.delta
            case _:
                assert_never(record)
        account = (record.player_id, record.currency)
        first = self.credited.get(key)
        if first is not None:
            if first != (account, amount):
                self.conflicts.append(key)
            return False
        self.credited[key] = (account, amount)
        self.balances[account] = self.balances.get(account, 0) + amount
        return True

    def apply_raw(self, raw: bytes) -> bool:
        """`apply` for a message of `settlements`, `refunds` or `adjustments` as read from Kafka."""
        return self.apply(_CREDIT.decode(raw))

    def apply_all(self, records: Iterable[Credit]) -> int:
        """Apply records in order; return how many credited."""
        return sum(self.apply(record) for record in records)
