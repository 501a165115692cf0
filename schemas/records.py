"""Records out: what croupier writes to `settlements`, `refunds`, `table-stats` and `rejected`."""

from __future__ import annotations

from typing import Literal

import msgspec

from schemas.events import Dice, Discs

RefundReason = Literal["round_cancelled", "late_bet", "invalid_bet"]
RejectReason = Literal[
    "malformed",
    "unknown_type",
    "unsupported_version",
    "invalid_field",
    "invalid_transition",
    "conflicting_duplicate",
    "duplicate_seq",
    "bad_signature",
]
Result = Literal["win", "lose", "push"]


class Settlement(
    msgspec.Struct,
    frozen=True,
    kw_only=True,
    tag_field="type",
    tag="settlement",
    omit_defaults=True,
    gc=False,
):
    """A confirmed bet decided against its round's result; `payout` is what the wallet credits."""

    v: int
    settlement_id: str
    bet_id: str
    round_id: str
    table_id: str
    player_id: str
    game: str
    kind: str
    pick: tuple[int, ...]
    stake: int
    currency: str
    result: Result
    payout: int
    dice: Dice | None = None
    discs: Discs | None = None
    at: str


class Refund(msgspec.Struct, frozen=True, kw_only=True, tag_field="type", tag="refund", gc=False):
    """A bet whose stake goes back to the player: cancelled round, late or invalid bet."""

    v: int
    refund_id: str
    bet_id: str
    round_id: str
    table_id: str
    player_id: str
    amount: int
    currency: str
    reason: RefundReason
    at: str


AdjustmentCause = Literal["correction", "void"]
AdjustedResult = Literal["win", "lose", "push", "void"]


class Adjustment(
    msgspec.Struct,
    frozen=True,
    kw_only=True,
    tag_field="type",
    tag="adjustment",
    omit_defaults=True,
    gc=False,
):
    """A settled bet decided again after a correction or a void; `delta` is what the wallet
    credits (a debit when negative), never 0."""

    v: int
    adjustment_id: str
    settlement_id: str
    bet_id: str
    round_id: str
    table_id: str
    player_id: str
    currency: str
    n: int
    cause: AdjustmentCause
    result: AdjustedResult
    previous_payout: int
    payout: int
    delta: int
    dice: Dice | None = None
    discs: Discs | None = None
    reason: str
    authorized_by: str
    at: str


class Rejected(
    msgspec.Struct, frozen=True, kw_only=True, tag_field="type", tag="rejected", gc=False
):
    """An input croupier could not accept, verbatim, with the reason."""

    v: int
    reason: RejectReason
    detail: str
    topic: str
    raw: str


class StatRound(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True, gc=False):
    """One round on the statistics board."""

    round_id: str
    dice: Dice | None = None
    discs: Discs | None = None


class TableStats(msgspec.Struct, frozen=True, kw_only=True, tag_field="type", tag="table_stats"):
    """The last 50 rounds with a result of a table, newest first, and counts over them."""

    v: int
    table_id: str
    game: str
    rounds: list[StatRound]
    counts: dict[str, int | dict[str, int]]


Record = Settlement | Refund | Adjustment | Rejected | TableStats
