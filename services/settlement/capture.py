"""What a fold writes of its state: its changes, all of it, or all of it again in parts (pure).

A `Layout` is where a task's changelog holds each round's bets (how many segments), which only the
state store keeps. `Layout.changes` gives what the fold changed since the last call (a forgotten
round's keys as tombstones, value None), told by the fold's journal: what a batch writes is
proportional to what the batch changed, never to the whole state. `Layout.snapshot` gives every
entry of the state, `Layout.part` one table or round of it written whole (what the store writes
again of its oldest parts).
The entries' format is `state`'s; the same state always gives the same bytes (docs/DESIGN.md,
"The state store").
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import assert_never

import msgspec

from schemas.events import BetPlaced
from services.settlement.fold import Fold
from services.settlement.rounds import (
    Cancelled,
    Closed,
    Open,
    Round,
    Settled,
    Table,
    Unopened,
    Voided,
)
from services.settlement.state import (
    ENCODER,
    SEGMENT_BYTES,
    VERSION,
    BetsState,
    BoardState,
    CorrectionState,
    Entry,
    Part,
    RoundState,
    TableState,
    bets_key,
    board_key,
    named,
    round_key,
    table_key,
)
from services.statistics.board import Board


class Layout:
    """How many segments of bets the changelog holds for each round of a fold's state: the store's
    bookkeeping of where it wrote what, which the fold never sees. A round absent has none."""

    __slots__ = ("segments",)

    def __init__(self) -> None:
        self.segments: dict[Part, int] = {}

    @classmethod
    def of(cls, keys: Iterable[bytes]) -> Layout:
        """The layout of a state whose live entries have these keys (what a restore read)."""
        layout = cls()
        for key in keys:
            found = named(key)
            if found is not None:
                layout.holds(*found)
        return layout

    def holds(self, kind: str, which: Part) -> None:
        """The state read holds an entry of this kind of this part (a segment counts)."""
        if kind == "bets":
            self.segments[which] = self.segments.get(which, 0) + 1

    def changes(self, fold: Fold) -> list[Entry]:
        """What the fold changed since the last call, in key order, and forget the journal: its
        forgotten rounds tombstoned, its changed rounds, tables and boards written, and the bets it
        accepted since as new segments of their rounds."""
        journal = fold.journal
        if journal is None:
            raise ValueError("the fold keeps no journal: build it with Fold(journal=True)")
        entries: dict[bytes, bytes | None] = {}
        for rnd in journal.forgotten:
            entries[round_key(rnd.table_id, rnd.round_id)] = None
            for segment in range(self.segments.pop((rnd.table_id, rnd.round_id), 0)):
                entries[bets_key(rnd.table_id, rnd.round_id, segment)] = None
        fresh: dict[Part, list[bytes]] = {}
        for event, raw in journal.accepted:
            if type(event) is BetPlaced:
                fresh.setdefault((event.table_id, event.round_id), []).append(raw)
        for rnd in journal.rounds:
            entries.update(self._segments(rnd, fresh.get((rnd.table_id, rnd.round_id), ())))
            entries[round_key(rnd.table_id, rnd.round_id)] = self._round(rnd)
        for table in journal.tables:
            entries[table_key(table.table_id)] = ENCODER.encode(_table(table))
        for table in journal.boards:
            assert table.board is not None
            entries[board_key(table.table_id)] = ENCODER.encode(_board(table.board))
        journal.clear()
        return sorted(entries.items())

    def snapshot(self, fold: Fold) -> list[Entry]:
        """Every entry of the fold's state, in key order (its journal is cleared: all is in it)."""
        if fold.journal is not None:
            fold.journal.clear()
        self.segments.clear()
        entries: list[Entry] = []
        for table in fold.tables.values():
            entries.extend(_table_entries(table))
            for rnd in table.rounds.values():
                entries.extend(self._whole(table, rnd))
        return sorted(entries)

    def part(self, fold: Fold, which: Part) -> list[Entry] | None:
        """A part of the fold's state written whole (None when the fold no longer holds it): a
        table's entry and board, or a round's entry and its bets joined into as few segments as
        fit, the segments past the new count tombstoned."""
        table_id, round_id = which
        table = fold.tables.get(table_id)
        if table is None:
            return None
        if round_id is None:
            return _table_entries(table)
        rnd = table.rounds.get(round_id)
        if rnd is None:
            return None
        old = self.segments.pop((table_id, round_id), 0)
        entries = self._whole(table, rnd)
        new = self.segments.get((table_id, round_id), 0)
        entries[-1:-1] = [(bets_key(table_id, round_id, k), None) for k in range(new, old)]
        return entries

    def count(self, fold: Fold) -> int:
        """The entries of the fold's state once its changes are written: what `snapshot` gives."""
        return sum(
            1 + (table.board is not None) + len(table.rounds) for table in fold.tables.values()
        ) + sum(self.segments.values())

    def _whole(self, table: Table, rnd: Round) -> list[Entry]:
        """A round's bets, all of them, as new segments, then the round's own entry."""
        bets = table.bets
        entries = list(self._segments(rnd, [bets[bet_id] for bet_id in rnd.seqs.values()]))
        entries.append((round_key(rnd.table_id, rnd.round_id), self._round(rnd)))
        return entries

    def _segments(self, rnd: Round, lines: Iterable[bytes]) -> Iterable[Entry]:
        """These bets' lines (verbatim, in reading order) as the round's next segments."""
        kept: list[msgspec.Raw] = []
        size = 0
        for line in lines:
            kept.append(msgspec.Raw(line))
            size += len(line) + 1
            if size >= SEGMENT_BYTES:
                yield self._segment(rnd, kept)
                kept, size = [], 0
        if kept:
            yield self._segment(rnd, kept)

    def _segment(self, rnd: Round, lines: list[msgspec.Raw]) -> Entry:
        which = (rnd.table_id, rnd.round_id)
        segment = self.segments.get(which, 0)
        self.segments[which] = segment + 1
        value = BetsState(
            v=VERSION, table_id=rnd.table_id, round_id=rnd.round_id, segment=segment, bets=lines
        )
        return (bets_key(rnd.table_id, rnd.round_id, segment), ENCODER.encode(value))

    def _round(self, rnd: Round) -> bytes:
        return ENCODER.encode(_round(rnd, self.segments.get((rnd.table_id, rnd.round_id), 0)))


def size(fold: Fold, which: Part) -> int:
    """About the bytes `Layout.part` writes (its bets' lines, or a table's board); 0 for one not
    held."""
    table_id, round_id = which
    table = fold.tables.get(table_id)
    if table is None:
        return 0
    if round_id is None:
        return 256 + (0 if table.board is None else 128 * len(table.board.rounds))
    rnd = table.rounds.get(round_id)
    if rnd is None:
        return 0
    return 512 + sum(len(table.bets[bet_id]) + 1 for bet_id in rnd.seqs.values())


def _table_entries(table: Table) -> list[Entry]:
    entries: list[Entry] = [(table_key(table.table_id), ENCODER.encode(_table(table)))]
    if table.board is not None:
        entries.append((board_key(table.table_id), ENCODER.encode(_board(table.board))))
    return entries


def _table(table: Table) -> TableState:
    return TableState(
        v=VERSION,
        table_id=table.table_id,
        opened=table.opened,
        decisions=table.decisions,
        bet_frontier=table.bet_frontier,
    )


def _board(board: Board) -> BoardState:
    rounds = list(board.rounds)
    return BoardState(v=VERSION, table_id=board.table_id, game=board.game, rounds=rounds)


def _round(rnd: Round, segments: int) -> RoundState:
    """A round's state as its record writes it: a field its phase does not know is -1 (a number)
    or empty (a text), as the format has always had it."""
    life = rnd.life
    game, ordinal, decision, suspensions, last_seq, fate_at = "", -1, -1, 0, -1, ""
    dice, discs, corrections = None, None, []
    match life:
        case Unopened():
            pass
        case Open():
            game, ordinal, suspensions = life.game, life.ordinal, life.suspensions
        case Closed():
            game, ordinal, suspensions = life.game, life.ordinal, life.suspensions
            last_seq = life.last_seq
        case Cancelled():
            game, ordinal, suspensions = life.game, life.ordinal, life.suspensions
            last_seq = -1 if life.last_seq is None else life.last_seq
            decision, fate_at = life.decision, life.fate_at
        case Settled() | Voided():
            game, ordinal, last_seq = life.game, life.ordinal, life.last_seq
            decision, fate_at = life.decision, life.fate_at
            dice, discs = life.result.dice, life.result.discs
            corrections = [
                CorrectionState(
                    dice=c.dice,
                    discs=c.discs,
                    void=c.odds is None,
                    reason=c.reason,
                    authorized_by=c.authorized_by,
                    at=c.at,
                )
                for c in life.corrections
            ]
        case _:
            assert_never(life)
    return RoundState(
        v=VERSION,
        table_id=rnd.table_id,
        round_id=rnd.round_id,
        game=game,
        ordinal=ordinal,
        decision=decision,
        phase=life.phase,
        suspensions=suspensions,
        last_seq=last_seq,
        event_ids=sorted(rnd.event_ids),
        dice=dice,
        discs=discs,
        fate_at=fate_at,
        segments=segments,
        corrections=corrections,
    )
