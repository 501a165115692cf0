"""What the live view shows, folded from the messages it reads (pure: time is passed in)."""

from __future__ import annotations

from collections import Counter, deque
from dataclasses import dataclass, field
from typing import Final, assert_never

import msgspec

from schemas.events import (
    BetPlaced,
    BettingClosed,
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
from schemas.records import Adjustment, Refund, Rejected, Settlement

_ROUND: Final = msgspec.json.Decoder(RoundEvent)
_BET: Final = msgspec.json.Decoder(BetPlaced)
_OUT: Final = msgspec.json.Decoder(Settlement | Refund | Adjustment | Rejected)
RESULTS: Final = 6


@dataclass(kw_only=True)
class TableView:
    """One table: its current round and status, and its latest outcomes (newest first)."""

    table_id: str
    game: str = ""
    round_id: str = ""
    status: str = ""
    before: str = ""
    bets: int = 0
    rounds: int = 0
    cancelled: int = 0
    results: deque[str] = field(default_factory=lambda: deque(maxlen=RESULTS))
    settled: int = 0
    refunded: int = 0
    corrected: int = 0
    voided: int = 0


class Rate:
    """Events per second over the last `window` seconds."""

    def __init__(self, window: float = 10.0) -> None:
        self.window = window
        self.marks: deque[tuple[float, int]] = deque()

    def add(self, now: float, count: int = 1) -> None:
        self.marks.append((now, count))

    def per_second(self, now: float) -> float:
        while self.marks and self.marks[0][0] < now - self.window:
            self.marks.popleft()
        return sum(n for _, n in self.marks) / self.window


def outcome(event: RoundResult) -> str:
    """A result in a few characters: dice `3-5-6 (14)`, discs `RRWW (2)` (reds counted)."""
    if event.dice is not None:
        return f"{'-'.join(map(str, event.dice))} ({sum(event.dice)})"
    discs = event.discs or ()
    return f"{''.join(d[0].upper() for d in discs)} ({sum(d == 'red' for d in discs)})"


@dataclass(kw_only=True)
class Dashboard:
    """Totals, rates and tables since the view started."""

    tables: dict[str, TableView] = field(default_factory=dict)
    settlements: int = 0
    refunds: Counter[str] = field(default_factory=Counter)
    rejected: Counter[str] = field(default_factory=Counter)
    staked: Counter[str] = field(default_factory=Counter)
    paid: Counter[str] = field(default_factory=Counter)
    settle_rate: Rate = field(default_factory=Rate)
    refund_rate: Rate = field(default_factory=Rate)
    pending: dict[str, int | None] = field(default_factory=dict)
    unreadable: int = 0
    corrections: Counter[str] = field(default_factory=Counter)
    adjustments: int = 0

    def read(self, role: str, raw: bytes, now: float) -> None:
        """Fold one message of the topic with this role (rounds, bets, settlements...)."""
        try:
            match role:
                case "rounds":
                    self._round(_ROUND.decode(raw))
                case "bets":
                    bet = _BET.decode(raw)
                    table = self._table(bet.table_id)
                    if bet.round_id == table.round_id:
                        table.bets = max(table.bets, bet.seq)
                case _:
                    self._record(_OUT.decode(raw), now)
        except msgspec.DecodeError:
            self.unreadable += 1

    @property
    def pending_bets(self) -> int:
        return sum(n for n in self.pending.values() if n is not None)

    def _table(self, table_id: str) -> TableView:
        table = self.tables.get(table_id)
        if table is None:
            table = self.tables[table_id] = TableView(table_id=table_id)
        return table

    def _round(self, event: RoundEvent) -> None:
        table = self._table(event.table_id)
        if isinstance(event, RoundCorrected | RoundVoided):  # of any recent round
            self.corrections[type_of(event).removeprefix("round.")] += 1
            if isinstance(event, RoundCorrected):
                table.corrected += 1
            else:
                table.voided += 1
            return
        if event.round_id != table.round_id and not isinstance(event, RoundOpened):
            return  # an older round's event (a redelivery); the view follows the current round
        match event:
            case RoundOpened():
                if event.round_id == table.round_id:
                    return
                table.game, table.round_id, table.status, table.bets = (
                    event.game,
                    event.round_id,
                    "betting",
                    0,
                )
            case BettingClosed():
                table.status = "closed"
            case RoundSuspended():
                if table.status != "suspended":
                    table.before, table.status = table.status, "suspended"
            case RoundResumed():
                table.status = table.before or table.status
            case RoundReshaken():
                table.status = "reshaking"
            case RoundResult():
                if table.status != "result":
                    table.status = "result"
                    table.rounds += 1
                    table.results.appendleft(outcome(event))
            case RoundCancelled():
                if table.status != "cancelled":
                    table.status = "cancelled"
                    table.cancelled += 1
                    table.results.appendleft("cancelled")
            case RoundCorrected() | RoundVoided():
                pass  # counted above
            case _:
                assert_never(event)

    def _record(self, record: Settlement | Refund | Adjustment | Rejected, now: float) -> None:
        match record:
            case Settlement():
                self.settlements += 1
                self.settle_rate.add(now)
                self.staked[record.currency] += record.stake
                self.paid[record.currency] += record.payout
                self._table(record.table_id).settled += 1
            case Refund():
                self.refunds[record.reason] += 1
                self.refund_rate.add(now)
                self._table(record.table_id).refunded += 1
            case Adjustment():
                self.adjustments += 1
                self.paid[record.currency] += record.delta
            case Rejected():
                self.rejected[record.reason] += 1
