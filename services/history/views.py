"""What the read side knows of each bet and each round: plain state, evolved by the projection."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Final, Literal, assert_never

import msgspec

from schemas.events import (
    BetPlaced,
    BettingClosed,
    Dice,
    Discs,
    RoundCancelled,
    RoundCorrected,
    RoundEvent,
    RoundOpened,
    RoundReshaken,
    RoundResult,
    RoundResumed,
    RoundSuspended,
    RoundVoided,
    type_of,
)
from schemas.records import Refund, Settlement

Status = Literal["pending", "settled", "refunded"]
Phase = Literal["unopened", "open", "closed", "result", "cancelled"]
Key = tuple[int, str, str, int, str]
"""Where a bet sorts in its player's history: (time in µs, table_id, round_id, seq, bet_id)."""

_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)


def micros(instant: datetime) -> int:
    """Microseconds since the epoch, exactly (no float)."""
    delta = instant - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def parse_micros(text: str) -> int:
    """Microseconds since the epoch of an RFC 3339 timestamp; 0 when it cannot be read."""
    value = text.strip().upper().replace(" ", "T").replace("Z", "+00:00")
    date, _, rest = value.partition("T")
    clock, sign, zone = rest, "", ""
    for mark in ("+", "-"):
        if mark in rest:
            clock, sign, zone = rest.partition(mark)
    whole, _, fraction = clock.partition(".")
    whole = whole[:6] + "59" if whole.endswith(":60") else whole  # a leap second sorts as :59
    digits = f".{fraction[:6]}" if fraction else ""
    try:
        return micros(datetime.fromisoformat(f"{date}T{whole}{digits}{sign}{zone}"))
    except ValueError:
        return 0


class Step(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """One accepted event of a round's timeline, as the table published it."""

    type: str
    event_id: str
    at: str
    game: str | None = None
    last_seq: int | None = None
    reason: str | None = None
    dice: Dice | None = None
    discs: Discs | None = None


class Bet:
    """A confirmed bet: what the table said (`bet.placed`) and what croupier decided."""

    __slots__ = (
        "bet_id",
        "currency",
        "decision",
        "kind",
        "pick",
        "placed_at",
        "placed_micros",
        "player_id",
        "round_id",
        "seq",
        "stake",
        "table_id",
    )

    def __init__(self, bet_id: str, player_id: str, table_id: str, round_id: str) -> None:
        self.bet_id = bet_id
        self.player_id = player_id
        self.table_id = table_id
        self.round_id = round_id
        self.seq: int | None = None
        self.kind: str | None = None
        self.pick: tuple[int, ...] | None = None
        self.stake = 0
        self.currency = ""
        self.placed_at: str | None = None
        self.placed_micros: int | None = None
        self.decision: Settlement | Refund | None = None

    @property
    def placed(self) -> bool:
        return self.placed_at is not None

    @property
    def status(self) -> Status:
        match self.decision:
            case None:
                return "pending"
            case Settlement():
                return "settled"
            case Refund():
                return "refunded"
            case _:
                assert_never(self.decision)

    def key(self) -> Key:
        """Newest last: by the time the table confirmed the bet, else the time it was decided."""
        if self.placed_micros is not None:
            at = self.placed_micros
        else:
            at = parse_micros(self.decision.at) if self.decision is not None else 0
        return (at, self.table_id, self.round_id, self.seq or 0, self.bet_id)

    def place(self, bet: BetPlaced) -> None:
        self.seq = bet.seq
        self.kind = bet.kind
        self.pick = bet.pick
        self.stake = bet.stake
        self.currency = bet.currency
        self.placed_at = bet.at.isoformat().replace("+00:00", "Z")
        self.placed_micros = micros(bet.at)

    def decide(self, decision: Settlement | Refund) -> None:
        self.decision = decision
        if self.placed:
            return
        match decision:
            case Settlement():
                self.kind = decision.kind
                self.pick = decision.pick
                self.stake = decision.stake
            case Refund():
                self.stake = decision.amount
        self.currency = decision.currency


class Round:
    """A round as recalled: its accepted events, its state, its outcome and its bets."""

    __slots__ = (
        "bet_ids",
        "cancel_reason",
        "dice",
        "discs",
        "event_ids",
        "fate_ts",
        "game",
        "last_seq",
        "phase",
        "reshakes",
        "round_id",
        "suspensions",
        "table_id",
        "timeline",
        "unobserved",
    )

    def __init__(self, table_id: str, round_id: str) -> None:
        self.table_id = table_id
        self.round_id = round_id
        self.game: str | None = None
        self.phase: Phase = "unopened"
        self.suspensions = 0
        self.reshakes = 0
        self.last_seq: int | None = None
        self.dice: Dice | None = None
        self.discs: Discs | None = None
        self.cancel_reason: str | None = None
        self.event_ids: set[str] = set()
        self.timeline: list[Step] = []
        self.bet_ids: set[str] = set()
        self.fate_ts: int | None = None
        self.unobserved: list[int] = []

    def apply(self, event: RoundEvent) -> None:
        """Record an event the round's life cycle accepted (the settlement fold is the judge)."""
        self.event_ids.add(event.event_id)
        step = Step(type=type_of(event), event_id=event.event_id, at=event.at)
        match event:
            case RoundOpened(game=game):
                self.game, self.phase = game, "open"
                step = msgspec.structs.replace(step, game=game)
            case BettingClosed(last_seq=last_seq):
                self.last_seq, self.phase = last_seq, "closed"
                step = msgspec.structs.replace(step, last_seq=last_seq)
            case RoundSuspended(reason=reason):
                self.suspensions += 1
                step = msgspec.structs.replace(step, reason=reason)
            case RoundResumed():
                self.suspensions = max(0, self.suspensions - 1)
            case RoundReshaken(reason=reason):
                self.reshakes += 1
                step = msgspec.structs.replace(step, reason=reason)
            case RoundResult(dice=dice, discs=discs):
                self.dice, self.discs, self.phase = dice, discs, "result"
                step = msgspec.structs.replace(step, dice=dice, discs=discs)
            case RoundCancelled(reason=reason):
                self.cancel_reason, self.phase = reason, "cancelled"
                step = msgspec.structs.replace(step, reason=reason)
            case RoundCorrected(dice=dice, discs=discs, reason=reason):
                self.dice, self.discs = dice, discs
                step = msgspec.structs.replace(step, dice=dice, discs=discs, reason=reason)
            case RoundVoided(reason=reason):
                step = msgspec.structs.replace(step, reason=reason)
            case _:
                assert_never(event)
        self.timeline.append(step)


class Totals(msgspec.Struct, frozen=True, kw_only=True):
    """A round's money in one currency; ggr (gross gaming revenue): stakes - payouts, settled."""

    currency: str
    bets: int
    settled: int
    refunded: int
    pending: int
    stakes: int
    payouts: int
    ggr: int
    refunds: int
    pending_stakes: int


def totals(bets: list[Bet]) -> list[Totals]:
    """The money of a round's bets, one entry per currency, in currency order."""
    sums: dict[str, list[int]] = {}
    for bet in bets:
        row = sums.setdefault(bet.currency, [0] * 8)
        row[0] += 1
        match bet.decision:
            case Settlement(stake=stake, payout=payout):
                row[1] += 1
                row[4] += stake
                row[5] += payout
            case Refund(amount=amount):
                row[2] += 1
                row[6] += amount
            case None:
                row[3] += 1
                row[7] += bet.stake
    return [
        Totals(
            currency=currency,
            bets=n,
            settled=settled,
            refunded=refunded,
            pending=pending,
            stakes=stakes,
            payouts=payouts,
            ggr=stakes - payouts,
            refunds=refunds,
            pending_stakes=pending_stakes,
        )
        for currency, (
            n,
            settled,
            refunded,
            pending,
            stakes,
            payouts,
            refunds,
            pending_stakes,
        ) in sorted(sums.items())
    ]
