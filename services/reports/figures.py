"""The regulator's report: rounds, bets, money and RTP per table, game, quarter hour and currency
(pure); `services.reports.daily` adds the quarters up into gaming days.

It is fed what croupier decided (settlements, refunds, adjustments) and the round events croupier
accepted; it re-decides nothing. A record counts in the quarter hour (UTC) of its own `at`: a
settlement and its stake in that of the round's result, a refund in that of its round's fate, an
adjustment (and the correction or void itself) in that of the correction or void, not of the
round it corrects. Money is exact: integers and fractions.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cache, lru_cache
from typing import Final

import msgspec

from schemas import times
from schemas.events import (
    AnyEvent,
    RoundCancelled,
    RoundCorrected,
    RoundOpened,
    RoundResult,
    RoundVoided,
)
from schemas.records import Adjustment, Record, Refund, Settlement
from services import games

RoundKey = tuple[str, str, str]
"""table_id, game, day (a quarter hour, or a gaming day once added up: `daily`)."""
MoneyKey = tuple[str, str, str, str]
"""table_id, game, day (a quarter hour, or a gaming day), currency."""
UNKNOWN: Final = "?"
"""The game of a round whose `round.opened` the report did not read."""


class Correction(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """One accepted correction or void: who authorised it and what it changed."""

    table_id: str
    round_id: str
    game: str
    day: str
    at: str
    n: int
    cause: str
    reason: str
    authorized_by: str
    before: list[int | str] | None = None
    after: list[int | str] | None = None


class Rounds(msgspec.Struct):
    table_id: str
    game: str
    day: str
    results: int = 0
    cancelled: int = 0
    corrected: int = 0
    voided: int = 0


class Money(msgspec.Struct):
    table_id: str
    game: str
    day: str
    currency: str
    bets: int = 0
    stakes: int = 0
    refunds: int = 0
    payouts: int = 0
    adjustments: int = 0
    weighted_rtp: Fraction = Fraction(0)
    """Sum over the settled bets of stake times the bet's theoretical RTP (PAR sheet)."""

    @property
    def ggr(self) -> int:
        """Gross gaming revenue: what was staked and not refunded, minus what was paid."""
        return self.stakes - self.refunds - self.payouts

    @property
    def rtp(self) -> Fraction | None:
        """What the settled stakes returned (adjustments included), or None without any."""
        settled = self.stakes - self.refunds
        return Fraction(self.payouts, settled) if settled else None

    @property
    def theoretical_rtp(self) -> Fraction | None:
        """The stake-weighted RTP of the same bets by the PAR sheet."""
        settled = self.stakes - self.refunds
        return self.weighted_rtp / settled if settled else None


@dataclass(kw_only=True)
class Report:
    """Every figure of the report, built by feeding it records and accepted round events."""

    rounds: dict[RoundKey, Rounds] = field(default_factory=dict)
    money: dict[MoneyKey, Money] = field(default_factory=dict)
    corrections: list[Correction] = field(default_factory=list)
    games: dict[tuple[str, str], str] = field(default_factory=dict)
    outcomes: dict[tuple[str, str], list[int | str]] = field(default_factory=dict)
    numbers: dict[tuple[str, str], int] = field(default_factory=dict)

    def accepted(self, event: AnyEvent) -> None:
        """An input croupier accepted (bets count through their decisions, not here)."""
        match event:
            case RoundOpened(game=game):
                self.opened(event.table_id, event.round_id, game)
            case RoundResult(dice=dice, discs=discs):
                self.event("round.result", event.table_id, event.round_id, event.at, dice or discs)
            case RoundCancelled():
                self.event("round.cancelled", event.table_id, event.round_id, event.at)
            case RoundCorrected(dice=dice, discs=discs):
                self.event(
                    "round.corrected",
                    event.table_id,
                    event.round_id,
                    event.at,
                    dice or discs,
                    event.reason,
                    event.authorized_by,
                )
            case RoundVoided():
                self.event(
                    "round.voided",
                    event.table_id,
                    event.round_id,
                    event.at,
                    None,
                    event.reason,
                    event.authorized_by,
                )
            case _:
                pass  # the other events of a round's life, and bets, move no figure

    def opened(self, table_id: str, round_id: str, game: str) -> None:
        self.games[(table_id, round_id)] = game

    def event(
        self,
        kind: str,
        table_id: str,
        round_id: str,
        at: str,
        outcome: Iterable[int | str] | None = None,
        reason: str = "",
        authorized_by: str = "",
    ) -> None:
        """An accepted round event that moves a figure, in its round's order."""
        key = (table_id, round_id)
        rounds = self._rounds(table_id, key, at)
        match kind:
            case "round.result":
                rounds.results += 1
                self.outcomes[key] = list(outcome or ())
            case "round.cancelled":
                rounds.cancelled += 1
            case "round.corrected":
                rounds.corrected += 1
                after = list(outcome or ())
                self._correction(key, at, "correction", reason, authorized_by, after)
                self.outcomes[key] = after
            case "round.voided":
                rounds.voided += 1
                self._correction(key, at, "void", reason, authorized_by, None)

    def record(self, record: Record) -> None:
        """A settlement, refund or adjustment croupier wrote (others are not money)."""
        match record:
            case Settlement():
                self.settled(
                    record.table_id,
                    record.round_id,
                    record.at,
                    record.currency,
                    record.stake,
                    record.payout,
                    record.game,
                    record.kind,
                    record.pick,
                )
            case Refund():
                self.refunded(
                    record.table_id, record.round_id, record.at, record.currency, record.amount
                )
            case Adjustment():
                self.adjusted(
                    record.table_id, record.round_id, record.at, record.currency, record.delta
                )
            case _:
                pass

    def settled(
        self,
        table_id: str,
        round_id: str,
        at: str,
        currency: str,
        stake: int,
        payout: int,
        game: str,
        kind: str,
        pick: Iterable[int],
        bets: int = 1,
    ) -> None:
        """`bets` settled bets of one wager and round (1 unless told), their stakes and payouts
        summed: every figure is a sum over bets, so feeding them at once changes none."""
        row = self._money(table_id, round_id, at, currency)
        row.bets += bets
        row.stakes += stake
        row.payouts += payout
        row.weighted_rtp += stake * _rtp(game, kind, pick)

    def refunded(
        self, table_id: str, round_id: str, at: str, currency: str, amount: int, bets: int = 1
    ) -> None:
        row = self._money(table_id, round_id, at, currency)
        row.bets += bets
        row.stakes += amount
        row.refunds += amount

    def adjusted(self, table_id: str, round_id: str, at: str, currency: str, delta: int) -> None:
        row = self._money(table_id, round_id, at, currency)
        row.adjustments += 1
        row.payouts += delta

    def add(self, more: Report) -> None:
        """Add the figures of a report of later events and records (of the same rounds or not):
        money and round counts by their keys, its corrections after these."""
        for key, row in more.money.items():
            add_money(self.money, key, row)
        for slot, counted in more.rounds.items():
            add_rounds(self.rounds, slot, counted)
        self.corrections.extend(more.corrections)

    def _rounds(self, table_id: str, key: tuple[str, str], at: str) -> Rounds:
        game = self.games.get(key, UNKNOWN)
        slot = (table_id, game, quarter(at))
        row = self.rounds.get(slot)
        if row is None:
            row = self.rounds[slot] = Rounds(table_id=table_id, game=game, day=slot[2])
        return row

    def money_slot(self, table_id: str, round_id: str, at: str, currency: str) -> MoneyKey:
        """Where a record of this round, time and currency counts: its table, its round's game,
        the quarter hour (UTC) of its `at`, its currency."""
        return (table_id, self.games.get((table_id, round_id), UNKNOWN), quarter(at), currency)

    def _money(self, table_id: str, round_id: str, at: str, currency: str) -> Money:
        slot = self.money_slot(table_id, round_id, at, currency)
        game = slot[1]
        row = self.money.get(slot)
        if row is None:
            row = self.money[slot] = Money(
                table_id=table_id, game=game, day=slot[2], currency=currency
            )
        return row

    def _correction(
        self,
        key: tuple[str, str],
        at: str,
        cause: str,
        reason: str,
        authorized_by: str,
        after: list[int | str] | None,
    ) -> None:
        n = self.numbers[key] = self.numbers.get(key, 0) + 1
        self.corrections.append(
            Correction(
                table_id=key[0],
                round_id=key[1],
                game=self.games.get(key, UNKNOWN),
                day=quarter(at),
                at=at,
                n=n,
                cause=cause,
                reason=reason,
                authorized_by=authorized_by,
                before=self.outcomes.get(key),
                after=after,
            )
        )


quarter: Final = lru_cache(maxsize=4096)(times.utc_quarter)
"""The quarter hour (UTC) of an RFC 3339 timestamp (schemas.times), remembered: a round's records
share its instants."""


def add_money(rows: dict[MoneyKey, Money], key: MoneyKey, row: Money) -> None:
    """Add a row's money to the row of its key (a copy of it where there is none)."""
    mine = rows.get(key)
    if mine is None:
        rows[key] = msgspec.structs.replace(row, day=key[2])
        return
    mine.bets += row.bets
    mine.stakes += row.stakes
    mine.refunds += row.refunds
    mine.payouts += row.payouts
    mine.adjustments += row.adjustments
    mine.weighted_rtp += row.weighted_rtp


def add_rounds(rows: dict[RoundKey, Rounds], key: RoundKey, row: Rounds) -> None:
    """Add a row's round counts to the row of its key (a copy of it where there is none)."""
    had = rows.get(key)
    if had is None:
        rows[key] = msgspec.structs.replace(row, day=key[2])
        return
    had.results += row.results
    had.cancelled += row.cancelled
    had.corrected += row.corrected
    had.voided += row.voided


def percent(value: Fraction | None, places: int = 4) -> str:
    """A fraction as a percentage rounded half away from zero to `places` decimals, exactly."""
    if value is None:
        return ""
    scaled = value * 100 * 10**places
    whole = (abs(scaled.numerator) * 2 + scaled.denominator) // (2 * scaled.denominator)
    sign = "-" if scaled < 0 and whole else ""
    text = str(whole).rjust(places + 1, "0")
    return f"{sign}{text[:-places]}.{text[-places:]}" if places else f"{sign}{text}"


@cache
def _rtps(game: str) -> dict[tuple[str, tuple[int, ...]], Fraction]:
    return {(line.wager.kind, line.wager.pick): line.rtp for line in games.par_sheet(game).lines}


def _rtp(game: str, kind: str, pick: Iterable[int]) -> Fraction:
    wager = games.wager(game, kind, tuple(pick))
    if wager is None:  # a settled bet is a wager of its game; kept total for a foreign record
        return Fraction(0)
    return _rtps(game)[(wager.kind, wager.pick)]
