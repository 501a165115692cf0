"""Record ids derived from the bet id alone, so that every replay yields the same ids.

A settlement's id is `settlement:<bet_id>`, a refund's `refund:<bet_id>`. `bet_id` is unique across
all tables, so each id names one record for ever; anyone can recompute it without a key or a
namespace, and an auditor reads off it the bet it decides. Wallets use it as their idempotency key.
"""

from __future__ import annotations

from typing import Final

SETTLEMENT: Final = "settlement:"
"""A settlement's id is this prefix and the bet id: the key wallets credit it under once."""
REFUND: Final = "refund:"
"""A refund's id is this prefix and the bet id: the key wallets credit it under once."""
