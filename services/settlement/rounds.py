"""The state the fold keeps per round and per table."""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from typing import Final, Literal

from schemas.events import AnyEvent, BetPlaced, Dice, Discs
from schemas.records import Settlement
from services.games import Odds, Pick
from services.statistics.board import Board

Phase = Literal["unopened", "open", "closed", "result", "cancelled", "voided"]
FINAL: Final = frozenset({"result", "cancelled", "voided"})

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


class Correction:
    """A correction (new outcome, its odds) or a void (no odds) of a round with a result."""

    __slots__ = ("at", "authorized_by", "dice", "discs", "n", "odds", "reason")

    def __init__(
        self,
        *,
        n: int,
        dice: Dice | None,
        discs: Discs | None,
        odds: Mapping[tuple[str, Pick], Odds] | None,
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
        "dice",
        "discs",
        "event_ids",
        "fate_at",
        "flushed",
        "game",
        "last_seq",
        "odds",
        "ordinal",
        "outcome",
        "phase",
        "round_id",
        "segments",
        "seqs",
        "settlement",
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
        self.dice: Dice | None = None
        self.discs: Discs | None = None
        self.outcome: Dice | Discs = ()  # type: ignore[assignment]  # set with the result
        self.fate_at = ""
        self.seqs: dict[int, str] = {}  # the bet of each seq: every bet read for it
        self.waiting: list[BetPlaced] = []
        self.settlement: Settlement | None = None  # what its settlements share, set with the result
        self.odds: Mapping[tuple[str, Pick], Odds] = {}  # every wager's odds, set with the result
        self.corrections: list[Correction] = []  # in table order; n is the index plus one
        self.flushed = 0  # bets of `seqs` already in the state changelog
        self.segments = 0  # changelog records holding them


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
