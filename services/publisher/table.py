"""A table's rounds as its game service publishes them: only the contract's order can be emitted.

Pure: event ids are uuid5 of (table, round, serial), `at` comes from an injected clock, and the
objects only build events; sending them is the publisher's job.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any, Final, Literal

from schemas.events import (
    BetPlaced,
    BettingClosed,
    GameName,
    RoundCancelled,
    RoundCorrected,
    RoundOpened,
    RoundReshaken,
    RoundResult,
    RoundResumed,
    RoundSuspended,
    RoundVoided,
    check_staff,
)

NAMESPACE: Final = uuid.UUID("5b0c6f3e-2a4d-5e8f-9c1b-7d3a6e2f4c80")
"""The uuid5 namespace of the event ids and bet ids the upstream helpers derive."""

Clock = Callable[[], datetime]
TablePhase = Literal["new", "betting", "closed", "result", "cancelled", "voided"]


class OutOfOrder(ValueError):
    """An event the round's life cycle does not allow now; nothing was emitted."""


def timestamp(instant: datetime) -> str:
    """RFC 3339 in UTC with milliseconds, e.g. 2026-11-29T12:00:00.250Z."""
    if instant.tzinfo is None:
        raise ValueError("the clock must return timezone-aware datetimes")
    utc = instant.astimezone(UTC)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"


def derived_id(*parts: str) -> str:
    """A deterministic id from business keys (uuid5 in NAMESPACE of the parts joined by '/')."""
    return str(uuid.uuid5(NAMESPACE, "/".join(parts)))


class RoundBuilder:
    """One round of one table: open, bets seq 1..n, close, then result or cancel.

    Suspend/resume may come in any non-final state, reshake only between close and result;
    after the result, corrections (to another outcome) any number of times and a void once, each
    with its reason and the supervisor who authorised it. Every other call raises OutOfOrder and
    changes nothing.
    """

    def __init__(self, *, table_id: str, round_id: str, game: GameName, clock: Clock) -> None:
        self.table_id = table_id
        self.round_id = round_id
        self.game: GameName = game
        self.clock = clock
        self.phase: TablePhase = "new"
        self.suspended = False
        self.seq = 0
        self.last_seq = -1
        self.outcome: tuple[object, ...] = ()
        self._serial = 0

    @property
    def final(self) -> bool:
        return self.phase in ("result", "cancelled", "voided")

    def open(self, *, dealer_id: str | None = None, shaker_id: str | None = None) -> RoundOpened:
        """The betting period starts, dealt by `dealer_id` with the shaker (bowl, dice set)
        `shaker_id` when given: the scopes of the outcome integrity tests (contract 1.2)."""
        self._need(self.phase == "new", "round.opened")
        check_staff(dealer_id, shaker_id)
        event = RoundOpened(
            **self._envelope(),
            game=self.game,
            dealer_id=dealer_id,
            shaker_id=shaker_id,
        )
        self.phase = "betting"
        return event

    def bet(
        self,
        *,
        player_id: str,
        kind: str,
        pick: Sequence[int] = (),
        stake: int,
        currency: str,
        bet_id: str | None = None,
    ) -> BetPlaced:
        """A bet the table confirmed during the betting period: the next seq."""
        self._need(self.phase == "betting" and not self.suspended, "bet.placed")
        return self._bet(self.seq + 1, player_id, kind, pick, stake, currency, bet_id)

    def late_bet(
        self,
        *,
        player_id: str,
        kind: str,
        pick: Sequence[int] = (),
        stake: int,
        currency: str,
        bet_id: str | None = None,
    ) -> BetPlaced:
        """A bet confirmed after betting closed (seq beyond last_seq): croupier refunds it."""
        self._need(self.phase != "new" and self.phase != "betting", "a late bet.placed")
        return self._bet(self.seq + 1, player_id, kind, pick, stake, currency, bet_id)

    def close(self) -> BettingClosed:
        """The betting period is over; the bets confirmed so far are 1..last_seq."""
        self._need(self.phase == "betting" and not self.suspended, "round.betting_closed")
        self.phase = "closed"
        self.last_seq = self.seq
        return BettingClosed(
            **self._envelope(),
            last_seq=self.last_seq,
        )

    def suspend(self, reason: str) -> RoundSuspended:
        """An unexpected problem: the dealer informs the supervisor."""
        self._need(self.phase in ("betting", "closed") and not self.suspended, "round.suspended")
        self.suspended = True
        return RoundSuspended(
            **self._envelope(),
            reason=reason,
        )

    def resume(self) -> RoundResumed:
        """The problem was solved quickly; the round goes on."""
        self._need(self.suspended and not self.final, "round.resumed")
        self.suspended = False
        return RoundResumed(**self._envelope())

    def reshake(self, reason: str) -> RoundReshaken:
        """The dice or discs are shaken again; bets stand."""
        self._need(self.phase == "closed", "round.reshaken")
        return RoundReshaken(
            **self._envelope(),
            reason=reason,
        )

    def result(
        self,
        *,
        dice: tuple[int, int, int] | None = None,
        discs: tuple[str, str, str, str] | None = None,
    ) -> RoundResult:
        """The outcome the dealer entered: dice for sicbo and thai-hilo, discs for xocdia."""
        self._need(self.phase == "closed" and not self.suspended, "round.result")
        self._shape("result", dice, discs)
        event = RoundResult(
            **self._envelope(),
            dice=dice,
            discs=discs,  # type: ignore[arg-type]  # values are checked on publishing
        )
        self.phase = "result"
        self.outcome = dice or discs or ()
        return event

    def correct(
        self,
        *,
        reason: str,
        authorized_by: str,
        dice: tuple[int, int, int] | None = None,
        discs: tuple[str, str, str, str] | None = None,
    ) -> RoundCorrected:
        """After the result: a supervisor corrects the dealer's entry to another outcome."""
        self._need(self.phase == "result", "round.corrected")
        self._shape("correction", dice, discs)
        if (dice or discs) == self.outcome:
            raise ValueError(f"the round's outcome is already {list(self.outcome)}")
        self._authorised(reason, authorized_by)
        event = RoundCorrected(
            **self._envelope(),
            dice=dice,
            discs=discs,  # type: ignore[arg-type]  # values are checked on publishing
            reason=reason,
            authorized_by=authorized_by,
        )
        self.outcome = dice or discs or ()
        return event

    def void(self, *, reason: str, authorized_by: str) -> RoundVoided:
        """After the result: the round is declared void; nothing may follow."""
        self._need(self.phase == "result", "round.voided")
        self._authorised(reason, authorized_by)
        self.phase = "voided"
        return RoundVoided(**self._envelope(), reason=reason, authorized_by=authorized_by)

    def _shape(self, what: str, dice: object, discs: object) -> None:
        if self.game == "xocdia":
            if discs is None or dice is not None:
                raise ValueError(f"a xocdia {what} needs discs (4 of red/white) and no dice")
        elif dice is None or discs is not None:
            raise ValueError(f"a {self.game} {what} needs dice (3 faces) and no discs")

    @staticmethod
    def _authorised(reason: str, authorized_by: str) -> None:
        if not reason.strip() or not authorized_by.strip():
            raise ValueError(
                "a correction or void needs a reason and the supervisor who authorised it"
            )

    def cancel(self, reason: str) -> RoundCancelled:
        """The round is void: every confirmed bet is refunded."""
        self._need(self.phase in ("betting", "closed"), "round.cancelled")
        self.phase = "cancelled"
        self.suspended = False
        return RoundCancelled(
            **self._envelope(),
            reason=reason,
        )

    def _bet(
        self,
        seq: int,
        player_id: str,
        kind: str,
        pick: Sequence[int],
        stake: int,
        currency: str,
        bet_id: str | None,
    ) -> BetPlaced:
        event_id = self._event_id()
        self.seq = seq
        return BetPlaced(
            v=1,
            event_id=event_id,
            table_id=self.table_id,
            round_id=self.round_id,
            at=self._now(),
            bet_id=bet_id or derived_id("bet", self.table_id, self.round_id, str(seq)),
            player_id=player_id,
            seq=seq,
            kind=kind,
            pick=tuple(pick),
            stake=stake,
            currency=currency,
        )

    def _need(self, allowed: bool, what: str) -> None:
        if not allowed:
            state = self.phase + (" and suspended" if self.suspended else "")
            raise OutOfOrder(
                f"{what} is not allowed now: round {self.round_id!r} of table {self.table_id!r} "
                f"is {state}"
            )

    def _event_id(self) -> str:
        self._serial += 1
        return derived_id(self.table_id, self.round_id, str(self._serial))

    def _now(self) -> datetime:
        instant = self.clock()
        if instant.tzinfo is None:
            raise ValueError("the clock must return timezone-aware datetimes")
        utc = instant.astimezone(UTC)
        return utc.replace(microsecond=utc.microsecond // 1000 * 1000)

    def _envelope(self) -> dict[str, Any]:
        """The fields the next round event of this round carries whatever its type."""
        return {
            "v": 1,
            "event_id": self._event_id(),
            "table_id": self.table_id,
            "round_id": self.round_id,
            "at": timestamp(self._now()),
        }


class Table:
    """One table of one game: hands out its rounds one after the other, numbered from `first`."""

    def __init__(
        self, *, table_id: str, game: GameName, clock: Clock, prefix: str = "", first: int = 1
    ) -> None:
        self.table_id = table_id
        self.game: GameName = game
        self.clock = clock
        self.prefix = prefix
        self.number = first - 1
        self.current: RoundBuilder | None = None

    def next_round(self) -> RoundBuilder:
        """The next round; the previous one must have its fate (result or cancelled)."""
        if self.current is not None and not self.current.final:
            raise OutOfOrder(
                f"table {self.table_id!r}: round {self.current.round_id!r} is still "
                f"{self.current.phase}; give it a result or cancel it first"
            )
        self.number += 1
        round_id = f"{self.table_id}-{self.prefix}{self.number:06d}"
        self.current = RoundBuilder(
            table_id=self.table_id, round_id=round_id, game=self.game, clock=self.clock
        )
        return self.current
