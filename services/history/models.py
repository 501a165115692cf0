"""The HTTP API's answers, typed once (msgspec Structs), and its query's checks (pydantic).

The handlers build these Structs and msgspec encodes them; the OpenAPI document's schemas are
made from the same Structs (`openapi.document`), so the JSON served and the JSON documented
cannot drift apart. Structs, not pydantic models: a recall of 10,000 bets is built and encoded
in milliseconds (docs/DESIGN.md, "Answers typed once"). Fields are in the order the JSON shows
them; no field is left out of an answer (null where absent) but a board round's, as its record
has them.
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec
from msgspec import Meta
from pydantic import BaseModel, ConfigDict, Field, model_validator

from schemas.events import Phase
from services.reports.days import (
    DEFAULT_STARTS,
    DEFAULT_ZONE,
    STARTS_PATTERN,
    ZONE_PATTERN,
    Period,
    parse_day,
    parse_starts,
    parse_zone,
)
from services.statistics.integrity import MIN_ROUNDS, WINDOW

Money = Annotated[int, Meta(description="integer minor units of `currency` (never a float)")]
Disc = Literal["red", "white"]


def described(text: str) -> Meta:
    """A field's description in the OpenAPI document."""
    return Meta(description=text)


class Answer(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """An answer of the API (its fields in the order the JSON shows them)."""


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


class IntegrityQuery(BaseModel):
    """The outcome integrity tests asked for: the window's size, one kind of scope, one game."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    window: int = Field(default=WINDOW, ge=MIN_ROUNDS, le=1_000_000)
    scope: Literal["table", "dealer", "shaker"] | None = None
    game: Literal["sicbo", "thai-hilo", "xocdia"] | None = None


_DAY = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$"


class ReportQuery(BaseModel):
    """The report's period: its first and last gaming day, when a gaming day starts and where."""

    model_config = ConfigDict(frozen=True, extra="ignore", populate_by_name=True)

    start: str | None = Field(default=None, alias="from", pattern=_DAY)
    to: str | None = Field(default=None, pattern=_DAY)
    day_starts: str = Field(default=DEFAULT_STARTS, pattern=STARTS_PATTERN)
    tz: str = Field(default=DEFAULT_ZONE, min_length=1, max_length=64, pattern=ZONE_PATTERN)

    @model_validator(mode="after")
    def _usable(self) -> ReportQuery:
        self.period()  # a PeriodError is a ValueError: pydantic says it, as each problem
        return self

    def period(self) -> Period:
        return Period(
            start=None if self.start is None else parse_day(self.start),
            to=None if self.to is None else parse_day(self.to),
            starts=parse_starts(self.day_starts),
            zone=parse_zone(self.tz),
        )


class AdjustmentOut(Answer):
    """A correction or void of the bet's round that changed what the bet pays."""

    adjustment_id: Annotated[str, described("adjustment:<n>:<bet_id> (wallet idempotency key)")]
    n: Annotated[int, described("the round's correction number: 1 for its first")]
    cause: Literal["correction", "void"]
    result: Literal["win", "lose", "push", "void"]
    previous_payout: Money
    payout: Annotated[Money, described("what the bet pays with this adjustment, stake included")]
    delta: Annotated[Money, described("payout - previous_payout; negative: a debit; never 0")]
    dice: Annotated[list[int] | None, described("the new outcome; null for a void")]
    discs: Annotated[list[Disc] | None, described("the new outcome; xocdia")]
    reason: str
    authorized_by: str
    at: Annotated[str, described("`at` of the correcting event")]


class BetOut(Answer):
    """A bet in a player's history or a round's recall: what was bet and what was decided."""

    bet_id: str
    player_id: str
    table_id: str
    round_id: str
    game: Annotated[str | None, described("the round's game, once its opening was read")]
    seq: Annotated[
        int | None, described("order the table confirmed it in; null until the bet is read")
    ]
    kind: str | None
    pick: list[int] | None
    stake: Money
    currency: str
    placed_at: Annotated[str | None, described("`at` of the bet.placed event")]
    status: Literal["pending", "settled", "refunded"]
    result: Annotated[Literal["win", "lose", "push"] | None, described("settled bets only")]
    payout: Annotated[Money | None, described("what the settlement credited, stake included")]
    adjustments: Annotated[
        list[AdjustmentOut],
        described("the corrections and voids that changed the payout, in order"),
    ]
    net_payout: Annotated[
        Money | None,
        described("what the bet pays after its adjustments (payout when it has none)"),
    ]
    refund_reason: Literal["round_cancelled", "late_bet", "invalid_bet"] | None
    decided_at: Annotated[str | None, described("`at` of the round event that decided the bet")]
    decision_id: Annotated[
        str | None, described("settlement_id or refund_id (wallet idempotency key)")
    ]
    round_status: Phase
    dice: Annotated[list[int] | None, described("the round's outcome: sicbo, thai-hilo")]
    discs: Annotated[list[Disc] | None, described("the round's outcome: xocdia")]


class BetsPage(Answer):
    """One page of a player's bets, newest first."""

    player_id: str
    total: Annotated[int, described("every bet of the player known now")]
    bets: list[BetOut]
    next_cursor: Annotated[
        str | None, described("pass as `cursor` for the next page; null at the end")
    ]


class StepOut(Answer, kw_only=True):
    """An accepted round event (redeliveries and refused events are left out)."""

    type: str
    event_id: str
    at: str
    game: str | None = None
    last_seq: int | None = None
    reason: str | None = None
    dice: list[int] | None = None
    discs: list[Disc] | None = None
    authorized_by: Annotated[str | None, described("corrections and voids")] = None
    previous_dice: Annotated[
        list[int] | None, described("a correction's or void's outcome before it")
    ] = None
    previous_discs: list[Disc] | None = None


class TotalsOut(Answer):
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


class RoundOut(Answer):
    """The recall of one round: its timeline, outcome, every bet's decision and its totals."""

    table_id: str
    round_id: str
    game: str | None
    status: Phase
    suspended: bool
    reshakes: int
    last_seq: int | None
    dice: list[int] | None
    discs: list[Disc] | None
    cancel_reason: str | None
    timeline: list[StepOut]
    bets: list[BetOut]
    totals: list[TotalsOut]


class StatRoundOut(Answer, kw_only=True, omit_defaults=True):
    """A round on a board: its outcome (dice, or discs), as its `table_stats` record has it."""

    round_id: str
    dice: list[int] | None = None
    discs: list[Disc] | None = None


class StatsOut(Answer, kw_only=True):
    """The contract's `table_stats` record of a table, as last written to `table-stats`."""

    type: Literal["table_stats"] = "table_stats"
    v: int
    table_id: str
    game: str
    rounds: Annotated[
        list[StatRoundOut], described("the last 50 rounds with a result, newest first")
    ]
    counts: dict[str, int | dict[str, int]]


class HealthOut(Answer):
    """Whether the read side runs and has read everything committed."""

    status: Literal["ok", "starting"]
    caught_up: Annotated[bool, described("every committed message of the topics has been read")]
    lag: Annotated[int | None, described("committed messages not read yet; null before assignment")]
    pending_bets: int
    players: int
    rounds: int
    tables: int


class TableOut(Answer):
    """A table: its game, its last result and the links of its board and statistics."""

    table_id: str
    game: Annotated[str | None, described("the game of its rounds; null before any is read")]
    last_result: Annotated[
        StatRoundOut | None,
        described("the newest round of its board; null before its first result"),
    ]
    board: Annotated[str, described("path of its HTML statistics board")]
    stats: Annotated[str, described("path of its `table_stats` record")]


class TablesOut(Answer):
    """Every table the read side knows, in table_id order."""

    tables: list[TableOut]


class ErrorOut(Answer, kw_only=True):
    """What went wrong, as every error of the API answers."""

    error: Annotated[
        str,
        described(
            "not_found, invalid_parameters, method_not_allowed, unauthorized (401), "
            "forbidden (403), unavailable (503) or internal"
        ),
    ]
    detail: str
    problems: list[str] = []


class FindingOut(Answer, kw_only=True):
    """One test of one scope's window, as a line of `croupier integrity --json` (docs/CONTRACT.md,
    "Outcome integrity")."""

    scope: Annotated[
        Literal["table", "dealer", "shaker"],
        described("a table (table_id), a dealer or a shaker within one game"),
    ]
    id: Annotated[str, described("the table's, dealer's or shaker's id")]
    game: str
    test: Annotated[
        Literal["faces", "totals", "reds"],
        described("faces and totals (sicbo, thai-hilo), reds (xocdia)"),
    ]
    rounds: Annotated[int, described("counted rounds in the window: its last ones, at most window")]
    statistic: Annotated[float, described("Pearson's chi-square against the fair counts")]
    df: Annotated[int, described("degrees of freedom")]
    p_value: float
    verdict: Annotated[
        Literal["too_few", "alarm", "watch", "ok"],
        described("too_few under 100 rounds; alarm when p < 1e-6, watch when p < 1e-3, else ok"),
    ]


class DistributionOut(Answer, kw_only=True):
    """A table's outcomes against the fair distribution, as its board charts them: the counts of
    the integrity test `test` over the table's window (docs/CONTRACT.md, "Outcome integrity")."""

    table_id: str
    game: Annotated[str, described("the game of the table's newest counted round")]
    test: Annotated[
        Literal["faces", "reds"],
        described("faces: every die of the window (sicbo, thai-hilo); reds: rounds by red discs"),
    ]
    window: Annotated[int, described("the most counted rounds the window holds: its last ones")]
    rounds: Annotated[int, described("counted rounds in the window")]
    classes: Annotated[list[str], described("each class's name: faces 1..6, red discs 0..4")]
    counts: Annotated[list[int], described("each class's count over the window")]
    expected: Annotated[
        list[int],
        described(
            "each class's fair count times `denominator` (exact: n P(class), n the counts' sum)"
        ),
    ]
    denominator: Annotated[int, described("the fair count of class i is expected[i] / denominator")]


RESPONSES: tuple[type[Answer], ...] = (
    BetsPage,
    RoundOut,
    StatsOut,
    TablesOut,
    HealthOut,
    FindingOut,
    DistributionOut,
    ErrorOut,
)
"""The answers the OpenAPI document names (the others are parts of them)."""
