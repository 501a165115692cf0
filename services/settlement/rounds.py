"""The state the fold keeps per round and per table.

A round is decided once, by its result or its cancellation. Its result is what its bets are
settled against from then on; a correction or a void after it only adjusts what they are paid.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from typing import Final

from schemas.events import AnyEvent, BetPlaced, Dice, Discs, Phase
from schemas.records import Settlement
from services.games import Odds, Outcome, Pick
from services.statistics.board import Board

"""Where a round is in its life cycle; a bet may come in any phase, even before `open`."""
FINAL: Final = frozenset({"result", "cancelled", "voided"})
"""The phases of a decided round: a bet of such a round is decided as it comes."""

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


class Round:
    """One round: its life-cycle state, the bets read for it, and those still waiting."""

    __slots__ = (
        "corrections",
        "decision",
        "event_ids",
        "fate_at",
        "game",
        "last_seq",
        "ordinal",
        "phase",
        "result",
        "round_id",
        "seqs",
        "suspensions",
        "table_id",
        "waiting",
    )

    def __init__(self, table_id: str, round_id: str) -> None:
        self.table_id = table_id
        self.round_id = round_id
        self.game = ""
        self.ordinal = -1
        self.decision = -1  # the how-manieth round of its table to be decided, once it is
        self.phase: Phase = "unopened"
        self.suspensions = 0
        self.last_seq = -1
        self.event_ids: set[str] = set()
        self.result: Result | None = None  # set with the result, None for any other phase
        self.fate_at = ""
        self.seqs: dict[int, str] = {}  # the bet of each seq: every bet read for it
        self.waiting: list[BetPlaced] = []
        self.corrections: list[Correction] = []  # in table order; n is the index plus one

    @property
    def dice(self) -> Dice | None:
        """The dice of the round's first result, if it has one with dice."""
        return None if self.result is None else self.result.dice

    @property
    def discs(self) -> Discs | None:
        """The discs of the round's first result, if it has one with discs."""
        return None if self.result is None else self.result.discs

    @property
    def outcome(self) -> Outcome | None:
        """The round's outcome as last corrected (a void keeps it); None before a result."""
        for c in reversed(self.corrections):
            if c.odds is not None:
                return outcome_of(c.dice, c.discs)
        return outcome_of(self.dice, self.discs)


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
