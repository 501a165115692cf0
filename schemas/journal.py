"""The `accepted` topic's records: a worker transaction's journal, for the read side.

A task's transaction writes to partition p of `accepted` what the read side needs of it: the
inputs its fold accepted, verbatim, and the decisions it committed (the settlements, refunds and
adjustments, byte for byte as on their own topics). A bet's placement and its decision are thus
in one partition, the placement first, and the read side reads one topic instead of four, a few
records a transaction instead of two a bet. A journal too big for one record is cut into several,
in order, each at most `LIMIT` bytes unless a single input is bigger.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from itertools import accumulate
from operator import add
from typing import Final

import msgspec

from schemas.events import AnyEvent
from schemas.records import Adjustment, Refund, Settlement

LIMIT: Final = 512 * 1024
"""Bytes a journal record takes at most when its parts allow (an input alone may take more)."""

Decision = Settlement | Refund | Adjustment


class Journal(msgspec.Struct, frozen=True, kw_only=True, tag_field="type", tag="journal", gc=False):
    """A part of one worker transaction: inputs accepted, in the order accepted, then decisions
    committed, in the order decided (both as the topics have them)."""

    v: int
    inputs: tuple[AnyEvent, ...] = ()
    decisions: tuple[Decision, ...] = ()


PREFIX: Final = b'{"type":"journal"'
"""How every journal record begins (what tells one from an input written alone)."""
_HEAD: Final = PREFIX + b',"v":1,"inputs":['
_MIDDLE: Final = b'],"decisions":['
_TAIL: Final = b"]}"
_FRAME: Final = len(_HEAD) + len(_MIDDLE) + len(_TAIL)


def records(inputs: Sequence[bytes], decisions: Sequence[bytes], limit: int = LIMIT) -> list[bytes]:
    """The journal of a transaction as records of at most `limit` bytes each (an input bigger
    than that alone in one): its inputs, each a JSON value as accepted, then its decisions, each
    an encoded record; none when both are empty. Spliced as bytes: nothing is decoded again.

    Each record takes as many items as fit, in order (an item costs its length and a comma);
    `ends[k]` is what the first k items cost together, so a record's last item is found by
    bisection instead of item by item."""
    items = [*inputs, *decisions]
    ends = list(map(add, accumulate(map(len, items), initial=0), range(len(items) + 1)))
    room = limit - _FRAME
    split = len(inputs)
    out: list[bytes] = []
    first = 0
    while first < len(items):
        last = max(bisect_right(ends, ends[first] + room) - 1, first + 1)
        these = (items[first : min(last, split)], items[max(first, split) : last])
        out.append(b"".join((_HEAD, b",".join(these[0]), _MIDDLE, b",".join(these[1]), _TAIL)))
        first = last
    return out
