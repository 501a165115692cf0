"""The HTTP API's request and response models (pydantic): its OpenAPI document and its checks."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

Money = Annotated[int, Field(description="integer minor units of `currency` (never a float)")]


class Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class BetsQuery(BaseModel):
    """Paging of a player's history: `cursor` (from the previous page) or `offset`, not both."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    limit: int = Field(default=50, ge=1, le=500)
    offset: int | None = Field(default=None, ge=0, le=2**63 - 1)
    cursor: str | None = Field(
        default=None, min_length=1, max_length=1024, pattern=r"^[A-Za-z0-9_-]+$"
    )

    @model_validator(mode="after")
    def _one_way(self) -> BetsQuery:
        if self.offset is not None and self.cursor is not None:
            raise ValueError("give either `cursor` or `offset`, not both")
        return self


class AdjustmentOut(Model):
    """A correction or void of the bet's round that changed what the bet pays."""

    adjustment_id: str = Field(description="adjustment:<n>:<bet_id> (wallet idempotency key)")
    n: int = Field(description="the round's correction number: 1 for its first")
    cause: Literal["correction", "void"]
    result: Literal["win", "lose", "push", "void"]
    previous_payout: Money
    payout: Money = Field(description="what the bet pays with this adjustment, stake included")
    delta: Money = Field(description="payout - previous_payout; negative: a debit; never 0")
    dice: list[int] | None = Field(description="the new outcome; null for a void")
    discs: list[Literal["red", "white"]] | None = Field(description="the new outcome; xocdia")
    reason: str
    authorized_by: str
    at: str = Field(description="`at` of the correcting event")


class BetOut(Model):
    """A bet in a player's history or a round's recall: what was bet and what was decided."""

    bet_id: str
    player_id: str
    table_id: str
    round_id: str
    game: str | None = Field(description="the round's game, once its opening was read")
    seq: int | None = Field(
        description="order the table confirmed it in; null until the bet is read"
    )
    kind: str | None
    pick: list[int] | None
    stake: Money
    currency: str
    placed_at: str | None = Field(description="`at` of the bet.placed event")
    status: Literal["pending", "settled", "refunded"]
    result: Literal["win", "lose", "push"] | None = Field(description="settled bets only")
    payout: Money | None = Field(description="what the settlement credited, stake included")
    adjustments: list[AdjustmentOut] = Field(
        description="the corrections and voids that changed the payout, in order"
    )
    net_payout: Money | None = Field(
        description="what the bet pays after its adjustments (payout when it has none)"
    )
    refund_reason: Literal["round_cancelled", "late_bet", "invalid_bet"] | None
    decided_at: str | None = Field(description="`at` of the round event that decided the bet")
    decision_id: str | None = Field(
        description="settlement_id or refund_id (wallet idempotency key)"
    )
    round_status: Literal["unopened", "open", "closed", "result", "cancelled", "voided"]
    dice: list[int] | None = Field(description="the round's outcome: sicbo, thai-hilo")
    discs: list[Literal["red", "white"]] | None = Field(description="the round's outcome: xocdia")


class BetsPage(Model):
    """One page of a player's bets, newest first."""

    player_id: str
    total: int = Field(description="every bet of the player known now")
    bets: list[BetOut]
    next_cursor: str | None = Field(
        description="pass as `cursor` for the next page; null at the end"
    )


class StepOut(Model):
    """An accepted round event (redeliveries and refused events are left out)."""

    type: str
    event_id: str
    at: str
    game: str | None = None
    last_seq: int | None = None
    reason: str | None = None
    dice: list[int] | None = None
    discs: list[Literal["red", "white"]] | None = None
    authorized_by: str | None = Field(default=None, description="corrections and voids")
    previous_dice: list[int] | None = Field(
        default=None, description="a correction's or void's outcome before it"
    )
    previous_discs: list[Literal["red", "white"]] | None = None


class TotalsOut(Model):
    """A round's money in one currency; ggr = stakes - payouts (adjustments included) over
    settled bets."""

    currency: str
    bets: int
    settled: int
    refunded: int
    pending: int
    stakes: Money
    payouts: Money
    ggr: Money
    refunds: Money
    pending_stakes: Money


class RoundOut(Model):
    """The recall of one round: its timeline, outcome, every bet's decision and its totals."""

    table_id: str
    round_id: str
    game: str | None
    status: Literal["unopened", "open", "closed", "result", "cancelled", "voided"]
    suspended: bool
    reshakes: int
    last_seq: int | None
    dice: list[int] | None
    discs: list[Literal["red", "white"]] | None
    cancel_reason: str | None
    timeline: list[StepOut]
    bets: list[BetOut]
    totals: list[TotalsOut]


class StatRoundOut(Model):
    round_id: str
    dice: list[int] | None = None
    discs: list[Literal["red", "white"]] | None = None


class StatsOut(Model):
    """The contract's `table_stats` record of a table, as last written to `table-stats`."""

    type: Literal["table_stats"] = "table_stats"
    v: int
    table_id: str
    game: str
    rounds: list[StatRoundOut] = Field(description="the last 50 rounds with a result, newest first")
    counts: dict[str, int | dict[str, int]]


class HealthOut(Model):
    status: Literal["ok", "starting"]
    caught_up: bool = Field(description="every committed message of the topics has been read")
    lag: int | None = Field(description="committed messages not read yet; null before assignment")
    pending_bets: int
    players: int
    rounds: int
    tables: int


class TableOut(Model):
    """A table: its game, its last result and the links of its board and statistics."""

    table_id: str
    game: str | None = Field(description="the game of its rounds; null before any is read")
    last_result: StatRoundOut | None = Field(
        description="the newest round of its board; null before its first result"
    )
    board: str = Field(description="path of its HTML statistics board")
    stats: str = Field(description="path of its `table_stats` record")


class TablesOut(Model):
    """Every table the read side knows, in table_id order."""

    tables: list[TableOut]


class ErrorOut(Model):
    error: str = Field(
        description="not_found, invalid_parameters, method_not_allowed, unauthorized (401), "
        "forbidden (403), unavailable (503) or internal"
    )
    detail: str
    problems: list[str] = []
