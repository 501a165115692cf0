"""The fold's state as a changelog: versioned records, keyed by what they hold (pure).

A task's state is a set of entries, each a key and a value, written to a compacted topic. A table
(`["table", t]`), its board (`["board", t]`), each round it keeps (`["round", t, r]`) and the bets
read for that round, in segments of reading order (`["bets", t, r, k]`), and the task's position
(`["task"]`). `capture` gives the entries a fold writes; `restore` builds the fold back from the
entries, exactly as it was (docs/DESIGN.md, "The state store").
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator, Mapping
from typing import Final, assert_never

import msgspec

from schemas.codec import read_event
from schemas.events import BetPlaced, Dice, Discs, Phase
from schemas.records import StatRound
from services import games
from services.games.model import Odds, Outcome, Pick
from services.settlement import decisions
from services.settlement.fold import Fold
from services.settlement.rounds import FINAL, Correction, Round, Table, outcome_of
from services.signing.signature import NO_KEYS, TableKeys
from services.statistics.board import WINDOW, Board

VERSION: Final = 1
"""The format of every state value; a value of another version makes the state unreadable."""
SEGMENT_BYTES: Final = 512 * 1024
"""A segment of bets is closed once it holds this many bytes of input lines (one grows past it by
at most one bet: an input line is at most 1 MiB, so a segment stays under the topic's 8 MiB)."""

Entry = tuple[bytes, bytes | None]
"""A key and its value; None is a tombstone (the key is forgotten)."""


class TableState(msgspec.Struct, frozen=True, kw_only=True, tag="table", gc=False):
    v: int
    table_id: str
    opened: int
    decisions: int
    bet_frontier: int


class BoardState(msgspec.Struct, frozen=True, kw_only=True, tag="board", gc=False):
    v: int
    table_id: str
    game: str
    rounds: list[StatRound]


class CorrectionState(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """A correction (with its new outcome) or a void (without one) of a round, in table order."""

    dice: Dice | None
    discs: Discs | None
    void: bool
    reason: str
    authorized_by: str
    at: str


class RoundState(msgspec.Struct, frozen=True, kw_only=True, tag="round", gc=False):
    v: int
    table_id: str
    round_id: str
    game: str
    ordinal: int
    decision: int
    phase: Phase
    suspensions: int
    last_seq: int
    event_ids: list[str]
    dice: Dice | None
    discs: Discs | None
    fate_at: str
    segments: int
    corrections: list[CorrectionState] = []


class BetsState(msgspec.Struct, frozen=True, kw_only=True, tag="bets", gc=False):
    v: int
    table_id: str
    round_id: str
    segment: int
    bets: list[msgspec.Raw]


Value = TableState | BoardState | RoundState | BetsState

ENCODER: Final = msgspec.json.Encoder()
_VALUE: Final = msgspec.json.Decoder(Value)


class StateError(Exception):
    """The entries do not form a state this version can restore; says which and why."""


def table_key(table_id: str) -> bytes:
    return ENCODER.encode(("table", table_id))


def board_key(table_id: str) -> bytes:
    return ENCODER.encode(("board", table_id))


def round_key(table_id: str, round_id: str) -> bytes:
    return ENCODER.encode(("round", table_id, round_id))


def bets_key(table_id: str, round_id: str, segment: int) -> bytes:
    return ENCODER.encode(("bets", table_id, round_id, str(segment)))


Part = tuple[str, str | None]
"""What the store writes whole at once: a table (its entry and its board), or a round (its entry
and its bets' segments), named (table_id, None) or (table_id, round_id)."""
_KEY: Final = msgspec.json.Decoder(tuple[str, ...])


def named(key: bytes) -> tuple[str, Part] | None:
    """What an entry's key names: its kind (`table`, `board`, `round` or `bets`) and the part it
    belongs to (None: the position's key, or no key of the state)."""
    try:
        match _KEY.decode(key):
            case [("table" | "board") as kind, table_id]:
                return (kind, (table_id, None))
            case ("round", table_id, round_id):
                return ("round", (table_id, round_id))
            case ("bets", table_id, round_id, _):
                return ("bets", (table_id, round_id))
            case _:
                return None
    except msgspec.DecodeError:
        return None


def part_of(key: bytes) -> Part | None:
    """The part an entry's key belongs to (None: the position's key, or no key of the state)."""
    found = named(key)
    return None if found is None else found[1]


def restore(
    entries: Mapping[bytes, bytes],
    horizon: int,
    *,
    journal: bool = True,
    keys: TableKeys = NO_KEYS,
) -> Fold:
    """The fold whose state these entries are (the live entries of a compacted changelog).

    `keys` check the events folded from now on; what the state holds was decided already.
    """
    tables: dict[str, TableState] = {}
    boards: dict[str, BoardState] = {}
    rounds: dict[tuple[str, str], RoundState] = {}
    segments: dict[tuple[str, str, int], tuple[BetsState, bytes]] = {}
    for key, raw in sorted(entries.items()):
        value = _decode(key, raw)
        match value:
            case TableState():
                tables[value.table_id] = value
                own = table_key(value.table_id)
            case BoardState():
                boards[value.table_id] = value
                own = board_key(value.table_id)
            case RoundState():
                rounds[(value.table_id, value.round_id)] = value
                own = round_key(value.table_id, value.round_id)
            case BetsState():
                segments[(value.table_id, value.round_id, value.segment)] = (value, raw)
                own = bets_key(value.table_id, value.round_id, value.segment)
            case _:
                assert_never(value)
        if own != key:
            raise StateError(f"state record {key[:200]!r} holds the value of another key")
    fold = Fold(horizon=horizon, journal=journal, keys=keys)
    for table_id, kept in tables.items():
        table = fold.tables[table_id] = Table(table_id)
        table.opened = kept.opened
        table.decisions = kept.decisions
        table.bet_frontier = kept.bet_frontier
        board = boards.pop(table_id, None)
        if board is not None:
            table.board = Board(table_id, board.game, depth=horizon)
            table.board.rounds = deque(board.rounds, maxlen=WINDOW + horizon)
    if boards:
        raise StateError(f"a board without its table: {sorted(boards)[0]!r}")
    decided: dict[str, list[tuple[int, str]]] = {}
    for (table_id, round_id), kept_round in rounds.items():
        owner = fold.tables.get(table_id)
        if owner is None:
            raise StateError(f"round {round_id!r} of table {table_id!r} without its table")
        rnd = owner.rounds[round_id] = _restore_round(kept_round)
        for segment in range(kept_round.segments):
            kept_bets = segments.pop((table_id, round_id, segment), None)
            if kept_bets is None:
                raise StateError(f"round {round_id!r} of table {table_id!r}: bets {segment} lost")
            _restore_bets(fold, owner, rnd, *kept_bets)
        if rnd.phase in FINAL:
            decided.setdefault(table_id, []).append((rnd.decision, round_id))
    if segments:
        table_id, round_id, segment = sorted(segments)[0]
        raise StateError(f"bets segment {segment} of round {round_id!r} without its round")
    for table_id, order in decided.items():
        fold.tables[table_id].decided = deque(round_id for _, round_id in sorted(order))
    return fold


def _decode(key: bytes, raw: bytes) -> Value:
    try:
        value = _VALUE.decode(raw)
    except msgspec.DecodeError as error:
        raise StateError(f"unreadable state record {key[:200]!r}: {error}") from None
    if value.v != VERSION:
        _versioned(value.v, f"state record {key[:200]!r}")
    return value


def _restore_round(kept: RoundState) -> Round:
    rnd = Round(kept.table_id, kept.round_id)
    rnd.game = kept.game
    rnd.ordinal = kept.ordinal
    rnd.decision = kept.decision
    rnd.phase = kept.phase
    rnd.suspensions = kept.suspensions
    rnd.last_seq = kept.last_seq
    rnd.event_ids = set(kept.event_ids)
    rnd.fate_at = kept.fate_at
    outcome = outcome_of(kept.dice, kept.discs)
    if rnd.phase in ("result", "voided"):
        if outcome is None:
            raise StateError(f"round {kept.round_id!r} has a result but no outcome")
        odds = _LazyOdds(rnd.game, outcome)
        rnd.result = decisions.result(rnd, kept.dice, kept.discs, odds)
    elif outcome is not None:
        raise StateError(f"round {kept.round_id!r} has an outcome but no result")
    for n, c in enumerate(kept.corrections, start=1):
        if rnd.result is None:
            raise StateError(f"round {kept.round_id!r} has corrections but no result")
        corrected = None
        if not c.void:
            outcome = outcome_of(c.dice, c.discs)
            if outcome is None:
                raise StateError(f"round {kept.round_id!r}: correction {n} has no outcome")
            corrected = _LazyOdds(rnd.game, outcome)
        rnd.corrections.append(
            Correction(
                n=n,
                dice=c.dice,
                discs=c.discs,
                odds=corrected,
                reason=c.reason,
                authorized_by=c.authorized_by,
                at=c.at,
            )
        )
    return rnd


class _LazyOdds(Mapping[tuple[str, Pick], Odds]):
    """A restored round's odds board, built when a bet or a correction first looks at it."""

    __slots__ = ("_board", "_game", "_outcome")

    def __init__(self, game: str, outcome: Outcome) -> None:
        self._game = game
        self._outcome = outcome
        self._board: Mapping[tuple[str, Pick], Odds] | None = None

    def _built(self) -> Mapping[tuple[str, Pick], Odds]:
        if self._board is None:
            self._board = games.odds_board(self._game, self._outcome)
        return self._board

    def __getitem__(self, key: tuple[str, Pick]) -> Odds:
        return self._built()[key]

    def __iter__(self) -> Iterator[tuple[str, Pick]]:
        return iter(self._built())

    def __len__(self) -> int:
        return len(self._built())


class _BetKey(msgspec.Struct, frozen=True, gc=False):
    """What a decided round needs of a kept bet: its id and seq (for repeats and corrections)."""

    type: str
    bet_id: str
    seq: int


class _SegmentKeys(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """A bets segment read for its bets' ids and seqs only."""

    bets: list[_BetKey]


_SEGMENT_KEYS: Final = msgspec.json.Decoder(_SegmentKeys)


def _restore_bets(fold: Fold, table: Table, rnd: Round, kept: BetsState, raw: bytes) -> None:
    """A decided round's bets are read for their id and seq only, from `raw` (the value `kept`
    was decoded from); a waiting one's in full, to be decided with its round."""
    if rnd.phase in FINAL:
        try:
            keys = _SEGMENT_KEYS.decode(raw).bets
        except msgspec.DecodeError as error:
            raise StateError(f"a bet of round {rnd.round_id!r} is unreadable: {error}") from None
        bets, seqs = table.bets, rnd.seqs
        for key, raw_line in zip(keys, kept.bets, strict=True):
            if key.type != "bet.placed":
                raise StateError(f"a bets segment of round {rnd.round_id!r} holds a round event")
            bets[key.bet_id] = bytes(raw_line)
            seqs[key.seq] = key.bet_id
        return
    for raw_line in kept.bets:
        line = bytes(raw_line)
        try:
            bet = read_event(line)
        except msgspec.DecodeError as error:
            raise StateError(f"a bet of round {rnd.round_id!r} is unreadable: {error}") from None
        if not isinstance(bet, BetPlaced):
            raise StateError(f"a bets segment of round {rnd.round_id!r} holds a round event")
        table.bets[bet.bet_id] = line
        rnd.seqs[bet.seq] = bet.bet_id
        rnd.waiting.append(bet)
        fold.pending += 1


TASK_KEY: Final = ENCODER.encode(("task",))
"""The key of a task's position: the input offsets its state is the fold of."""


class Position(msgspec.Struct, frozen=True, kw_only=True, tag="task", gc=False):
    """Written in every transaction: the state is the fold of the input below these offsets, and
    every entry of it was written at or after offset `snapshot` of the task's state partition
    (where the oldest part of it was last written whole; 0: read it all)."""

    v: int
    rounds: int
    bets: int
    snapshot: int = 0
    entries: int = -1
    """How many entries the state holds besides this one (-1: not counted): a read from
    `snapshot` that finds another number (a copy of the topic at other offsets) reads it all."""


_POSITION: Final = msgspec.json.Decoder(Position)


def position_entry(rounds: int, bets: int, snapshot: int = 0, entries: int = -1) -> Entry:
    value = Position(v=VERSION, rounds=rounds, bets=bets, snapshot=snapshot, entries=entries)
    return (TASK_KEY, ENCODER.encode(value))


def read_position(raw: bytes) -> Position:
    try:
        position = _POSITION.decode(raw)
    except msgspec.DecodeError as error:
        raise StateError(f"unreadable position record: {error}") from None
    _versioned(position.v, "the position record")
    return position


def _versioned(version: int, what: str) -> None:
    if version != VERSION:
        raise StateError(
            f"{what} is of format version {version}; this croupier reads version {VERSION}"
        )
