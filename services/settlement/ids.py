"""Record ids derived from the bet id alone, so that every replay yields the same ids.

An id is the RFC 4122 version-5 UUID of the name `settlement:<bet_id>` or `refund:<bet_id>` in the
namespace below: any language can recompute it (Python: `uuid.uuid5(NAMESPACE, "refund:" + id)`).
"""

from __future__ import annotations

import hashlib
import uuid
from typing import Final

NAMESPACE: Final = uuid.UUID("8f5d3c5e-6b1a-5c7e-9d2f-0c4b7a1e3f60")


_VARIANT: Final = {c: "89ab"[int(c, 16) & 3] for c in "0123456789abcdef"}
_SETTLEMENT: Final = NAMESPACE.bytes + b"settlement:"
_REFUND: Final = NAMESPACE.bytes + b"refund:"
_sha1 = hashlib.sha1


def settlement_id(bet_id: str) -> str:
    """The id wallets use as the idempotency key of a bet's settlement."""
    h = _sha1(_SETTLEMENT + bet_id.encode()).hexdigest()
    return f"{h[:8]}-{h[8:12]}-5{h[13:16]}-{_VARIANT[h[16]]}{h[17:20]}-{h[20:32]}"


def refund_id(bet_id: str) -> str:
    """The id wallets use as the idempotency key of a bet's refund."""
    h = _sha1(_REFUND + bet_id.encode()).hexdigest()
    return f"{h[:8]}-{h[8:12]}-5{h[13:16]}-{_VARIANT[h[16]]}{h[17:20]}-{h[20:32]}"
