"""The state the fold keeps per round and per table.

A round is decided once, by its result or its cancellation. Its result is what its bets are
settled against from then on; a correction or a void after it only adjusts what they are paid.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from typing import ClassVar, Final

from schemas.events import AnyEvent, BetPlaced, Dice, Discs, Phase
from schemas.records import Settlement
from services.games import Odds, Outcome, Pick
from services.statistics.board import Board

OddsBoard = Mapping[tuple[str, Pick], Odds]
"""Every wager's odds on one outcome, by (kind, pick)."""

# What makes two `bet.placed` events "the same bet": every field but event_id and at.
Fingerprint = tuple[str, str, int, str, tuple[int, ...], int, str]


def fingerprint(bet: BetPlaced) -> Fingerprint:
    """The content of a bet that a redelivery repeats exactly."""
    return (
        bet.round_id,
        bet.player_id,
        bet.seq,
        bet.kind,
        bet.pick,
        bet.stake,
        bet.currency,
    )


def outcome_of(dice: Dice | None, discs: Discs | None) -> Outcome | None:
    """The outcome an event or a record carries: its dice, or its discs (it has one of them)."""
    return dice if dice is not None else discs


class Result:
    """What a round's result fixed for all its bets: its outcome, every wager's odds on it, and
    the part of a settlement its settlements share (kept through corrections and a void)."""

    __slots__ = ("dice", "discs", "odds", "settlement")

    def __init__(
        self, dice: Dice | None, discs: Discs | None, odds: OddsBoard, settlement: Settlement
    ) -> None:
        self.dice = dice
        self.discs = discs
        self.odds = odds
        self.settlement = settlement


class Correction:
    """A correction (new outcome, its odds) or a void (no odds) of a round with a result."""

    __slots__ = ("at", "authorized_by", "dice", "discs", "n", "odds", "reason")

    def __init__(
        self,
        *,
        n: int,
        dice: Dice | None,
        discs: Discs | None,
        odds: OddsBoard | None,
        reason: str,
        authorized_by: str,
        at: str,
    ) -> None:
        self.n = n
        self.dice = dice
        self.discs = discs
        self.odds = odds
        self.reason = reason
        self.authorized_by = authorized_by
        self.at = at


class Unopened:
    """Bets were read for the round, its `round.opened` not yet (a bet may come in any phase)."""

    __slots__ = ()
    phase: ClassVar[Phase] = "unopened"


class Open:
    """Opened by `round.opened` (its game, and its place among the table's rounds): taking bets;
    suspended while `suspensions` is above 0."""

    __slots__ = ("game", "ordinal", "suspensions")
    phase: ClassVar[Phase] = "open"

    def __init__(self, game: str, ordinal: int, suspensions: int = 0) -> None:
        self.game = game
        self.ordinal = ordinal
        self.suspensions = suspensions


class Closed:
    """Closed for bets after seq `last_seq`, its fate to come (it may be reshaken)."""

    __slots__ = ("game", "last_seq", "ordinal", "suspensions")
    phase: ClassVar[Phase] = "closed"

    def __init__(self, game: str, ordinal: int, suspensions: int, last_seq: int) -> None:
        self.game = game
        self.ordinal = ordinal
        self.suspensions = suspensions
        self.last_seq = last_seq


class Cancelled:
    """Decided by `round.cancelled` (the how-manieth of its table, `decision`), at `fate_at`:
    every bet refunded. `last_seq` is None when it was cancelled open for bets."""

    __slots__ = ("decision", "fate_at", "game", "last_seq", "ordinal", "suspensions")
    phase: ClassVar[Phase] = "cancelled"

    def __init__(
        self,
        game: str,
        ordinal: int,
        suspensions: int,
        last_seq: int | None,
        *,
        decision: int,
        fate_at: str,
    ) -> None:
        self.game = game
        self.ordinal = ordinal
        self.suspensions = suspensions
        self.last_seq = last_seq
        self.decision = decision
        self.fate_at = fate_at


class Resulted:
    """Decided by `round.result` (the how-manieth of its table, `decision`), at `fate_at`: its
    bets settled against `result`, and adjusted for each correction since, in table order."""

    __slots__ = ("corrections", "decision", "fate_at", "game", "last_seq", "ordinal", "result")

    def __init__(
        self,
        game: str,
        ordinal: int,
        last_seq: int,
        *,
        decision: int,
        fate_at: str,
        result: Result,
        corrections: list[Correction] | None = None,
    ) -> None:
        self.game = game
        self.ordinal = ordinal
        self.last_seq = last_seq
        self.decision = decision
        self.fate_at = fate_at
        self.result = result
        self.corrections = corrections or []  # n is the index plus one

    @property
    def outcome(self) -> Outcome:
        """The outcome as last corrected (a void keeps it)."""
        for c in reversed(self.corrections):
            if c.odds is not None:
                outcome = outcome_of(c.dice, c.discs)
                assert outcome is not None, "a correction carries dice or discs"
                return outcome
        outcome = outcome_of(self.result.dice, self.result.discs)
        assert outcome is not None, "a result carries dice or discs"
        return outcome


class Settled(Resulted):
    """A round with a result, open to corrections and a void."""

    __slots__ = ()
    phase: ClassVar[Phase] = "result"


class Voided(Resulted):
    """A round with a result, voided after it: its last correction is the void, and it is final."""

    __slots__ = ()
    phase: ClassVar[Phase] = "voided"


Life = Unopened | Open | Closed | Settled | Voided | Cancelled
"""Where a round is in its life cycle, and what that phase knows of it."""
Opened = Open | Closed | Settled | Voided | Cancelled
"""A round its `round.opened` was read for: its game and ordinal are known."""
Decided = Settled | Voided | Cancelled
"""A decided round: a bet of it is decided as it is read."""
DECIDED: Final = (Settled, Voided, Cancelled)


class Round:
    """One round: where it is in its life cycle, the bets read for it, and those still waiting."""

    __slots__ = ("event_ids", "life", "round_id", "seqs", "table_id", "waiting")

    def __init__(self, table_id: str, round_id: str) -> None:
        self.table_id = table_id
        self.round_id = round_id
        self.life: Life = Unopened()
        self.event_ids: set[str] = set()
        self.seqs: dict[int, str] = {}  # the bet of each seq: every bet read for it
        self.waiting: list[BetPlaced] = []

    @property
    def phase(self) -> Phase:
        return self.life.phase


class Table:
    """Everything the fold knows of one table; tables never share state (one partition each)."""

    __slots__ = (
        "bet_frontier",
        "bets",
        "board",
        "decided",
        "decisions",
        "opened",
        "rounds",
        "table_id",
    )

    def __init__(self, table_id: str) -> None:
        self.table_id = table_id
        self.rounds: dict[str, Round] = {}
        self.bets: dict[str, bytes] = {}  # the line each bet was read from, to judge a repeat
        self.opened = 0
        self.decided: deque[str] = deque()
        self.decisions = 0  # rounds decided so far, the forgotten ones included
        self.bet_frontier = -1
        self.board: Board | None = None


class Journal:
    """What the fold changed since the shell last wrote its state (kept only when asked for)."""

    __slots__ = ("accepted", "boards", "forgotten", "rounds", "tables")

    def __init__(self) -> None:
        self.rounds: set[Round] = set()
        self.tables: set[Table] = set()
        self.boards: set[Table] = set()
        self.forgotten: list[Round] = []
        self.accepted: list[tuple[AnyEvent, bytes]] = []  # every accepted input, decoded and raw

    def clear(self) -> None:
        self.rounds.clear()
        self.tables.clear()
        self.boards.clear()
        self.forgotten.clear()
        self.accepted.clear()
