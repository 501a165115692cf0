"""The fold's state as a changelog: versioned records, keyed by what they hold (pure).

A task's state is a set of entries, each a key and a value, written to a compacted topic. A table
(`["table", t]`), its board (`["board", t]`), each round it keeps (`["round", t, r]`) and the bets
read for that round, in segments of reading order (`["bets", t, r, k]`), and the task's position
(`["task"]`). `capture` gives the entries a fold writes; `rebuild` builds the fold back from the
entries, exactly as it was (docs/DESIGN.md, "The state store").
"""

from __future__ import annotations

from typing import Final

import msgspec

from schemas.events import Dice, Discs, Phase
from schemas.records import StatRound

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


def decode(key: bytes, raw: bytes) -> Value:
    """A state value, of this version, or StateError saying why not."""
    try:
        value = _VALUE.decode(raw)
    except msgspec.DecodeError as error:
        raise StateError(f"unreadable state record {key[:200]!r}: {error}") from None
    if value.v != VERSION:
        _versioned(value.v, f"state record {key[:200]!r}")
    return value


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
