"""Record ids derived from the bet id alone, so that every replay yields the same ids.

A settlement's id is `settlement:<bet_id>`, a refund's `refund:<bet_id>`, an adjustment's
`adjustment:<n>:<bet_id>`. `bet_id` is unique across all tables, so each id names one record for
ever; anyone can recompute it without a key or a namespace, and an auditor reads off it the bet it
decides. Wallets use it as their idempotency key.
"""

from __future__ import annotations

from typing import Final

SETTLEMENT: Final = "settlement:"
"""A settlement's id is this prefix and the bet id: the key wallets credit it under once."""
REFUND: Final = "refund:"
"""A refund's id is this prefix and the bet id: the key wallets credit it under once."""
ADJUSTMENT: Final = "adjustment:"
"""An adjustment's id is this prefix, its correction number n, `:` and the bet id
(`adjustment:2:B17`): n first, so that any bet id reads back unambiguously."""
