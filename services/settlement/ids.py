"""Record ids derived from the bet id alone, so that every replay yields the same ids.

A settlement's id is `settlement:<bet_id>`, a refund's `refund:<bet_id>`. `bet_id` is unique across
all tables, so each id names one record for ever; anyone can recompute it without a key or a
namespace, and an auditor reads off it the bet it decides. Wallets use it as their idempotency key.
"""

from __future__ import annotations

from typing import Final

SETTLEMENT: Final = "settlement:"
REFUND: Final = "refund:"


def settlement_id(bet_id: str) -> str:
    """The id wallets use as the idempotency key of a bet's settlement."""
    return SETTLEMENT + bet_id


def refund_id(bet_id: str) -> str:
    """The id wallets use as the idempotency key of a bet's refund."""
    return REFUND + bet_id
