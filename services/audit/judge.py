"""The audit's pure core: fold the input window, and compare with what was committed."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Final

import msgspec

from schemas.events import BetPlaced
from schemas.records import Record, Rejected
from services.audit.compare import Outputs, Report, compare, outputs
from services.audit.window import Kept, Scope, Span
from services.settlement.fold import Fold
from services.settlement.misrouted import Elsewhere, Homes
from services.signing.signature import NO_KEYS, TableKeys


class _Stamp(msgspec.Struct, kw_only=True):
    at: Annotated[datetime, msgspec.Meta(tz=True)] | None = None


_STAMP: Final = msgspec.json.Decoder(_Stamp)


@dataclass(frozen=True, kw_only=True)
class Judgement:
    """The comparison, the bets still waiting (of rounds that can be checked), and the input."""

    report: Report
    waiting: list[BetPlaced]
    waiting_unchecked: int
    events: int
    """The inputs judged: each forwarded input once (its copy)."""
    newest: datetime | None


def judge(
    kept: Sequence[Kept],
    spans: Mapping[str, Sequence[Span]],
    found: Outputs,
    horizon: int,
    keys: TableKeys = NO_KEYS,
) -> Judgement:
    """Fold the kept input (every round event, then every bet: an interleaving the contract
    allows), and compare its records with `found` within what the window lets be checked.

    `spans` gives each topic role's partitions as read ("rounds", "bets", and the outputs'
    roles); without them every partition counts as whole. `keys` are the signing tables' keys,
    as the workers have them. An input read from a partition other than its table's was
    forwarded by the workers (docs/CONTRACT.md, section 1a): its copy is judged, not it.
    """
    fold = Fold(horizon=horizon, keys=keys)
    partitions = len(spans.get("rounds", ()))
    homes = Homes(partitions) if partitions else None
    forwarded = 0
    records: list[Record] = []
    newest: datetime | None = None
    for kind in ("rounds", "bets"):
        for message in kept:
            if message.kind != kind:
                continue
            try:
                out = fold.feed(kind, message.value, homes=homes, partition=message.partition)
            except Elsewhere:
                forwarded += 1
                continue
            records.extend(out)
            if not any(isinstance(r, Rejected) for r in out):
                at = _at(message.value)
                if at is not None and (newest is None or at > newest):
                    newest = at
    boards = [b for t in fold.tables if (b := fold.stats(t)) is not None]
    outs = {role: v for role, v in spans.items() if role not in ("rounds", "bets")}
    scope = Scope(spans.get("rounds", ()), spans.get("bets", ()), outs, kept)
    waiting = list(fold.waiting())
    checkable = [b for b in waiting if scope.round(b.table_id, b.round_id) is None]
    return Judgement(
        report=compare(outputs(records, boards), found, scope),
        waiting=checkable,
        waiting_unchecked=len(waiting) - len(checkable),
        events=len(kept) - forwarded,
        newest=newest,
    )


def _at(raw: bytes) -> datetime | None:
    try:
        return _STAMP.decode(raw).at
    except msgspec.DecodeError:
        return None
