"""What a fold writes of its state: its changes, all of it, or all of it again in parts (pure).

`changes` gives what the fold changed since the last call (a forgotten round's keys as tombstones,
value None): what a batch writes is proportional to what the batch changed, never to the whole
state. `snapshot` gives every entry of the state, `part` one table or round of it written whole
(what the store writes again of its oldest parts).
The entries' format is `state`'s; the same state always gives the same bytes (docs/DESIGN.md,
"The state store").
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import islice

import msgspec

from services.settlement.fold import Fold
from services.settlement.rounds import Round, Table
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
    round_key,
    table_key,
)
from services.statistics.board import Board


def changes(fold: Fold) -> list[Entry]:
    """What the fold changed since the last call, in key order, and forget the journal."""
    journal = fold.journal
    if journal is None:
        raise ValueError("the fold keeps no journal: build it with Fold(journal=True)")
    entries: dict[bytes, bytes | None] = {}
    for rnd in journal.forgotten:
        entries[round_key(rnd.table_id, rnd.round_id)] = None
        for segment in range(rnd.segments):
            entries[bets_key(rnd.table_id, rnd.round_id, segment)] = None
    for rnd in journal.rounds:
        table = fold.tables[rnd.table_id]
        entries.update(_new_segments(table, rnd))
        entries[round_key(rnd.table_id, rnd.round_id)] = ENCODER.encode(_round(rnd))
    for table in journal.tables:
        entries[table_key(table.table_id)] = ENCODER.encode(_table(table))
    for table in journal.boards:
        assert table.board is not None
        entries[board_key(table.table_id)] = ENCODER.encode(_board(table.board))
    journal.clear()
    return sorted(entries.items())


def snapshot(fold: Fold) -> list[Entry]:
    """Every entry of the fold's state, in key order (its journal is cleared: all is in it)."""
    if fold.journal is not None:
        fold.journal.clear()
    entries: list[Entry] = []
    for table in fold.tables.values():
        entries.append((table_key(table.table_id), ENCODER.encode(_table(table))))
        if table.board is not None:
            entries.append((board_key(table.table_id), ENCODER.encode(_board(table.board))))
        for rnd in table.rounds.values():
            rnd.flushed = rnd.segments = 0
            entries.extend(_new_segments(table, rnd))
            entries.append((round_key(table.table_id, rnd.round_id), ENCODER.encode(_round(rnd))))
    return sorted(entries)


def part(fold: Fold, which: Part) -> list[Entry] | None:
    """A part of the fold's state written whole (None when the fold no longer holds it): a table's
    entry and board, or a round's entry and its bets joined into as few segments as fit, the
    segments past the new count tombstoned."""
    table_id, round_id = which
    table = fold.tables.get(table_id)
    if table is None:
        return None
    if round_id is None:
        return _table_entries(table)
    rnd = table.rounds.get(round_id)
    return None if rnd is None else _round_entries(table, rnd)


def size(fold: Fold, which: Part) -> int:
    """About the bytes `part` writes (its bets' lines, or a table's board); 0 for one not held."""
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


def _round_entries(table: Table, rnd: Round) -> list[Entry]:
    """A round written whole: its bets joined into segments, the old ones past them tombstoned."""
    old = rnd.segments
    rnd.flushed = rnd.segments = 0
    entries = list(_new_segments(table, rnd))
    entries.extend(
        (bets_key(table.table_id, rnd.round_id, k), None) for k in range(rnd.segments, old)
    )
    entries.append((round_key(table.table_id, rnd.round_id), ENCODER.encode(_round(rnd))))
    return entries


def count(fold: Fold) -> int:
    """The entries of the fold's state once its changes are written: what `snapshot` gives."""
    return sum(
        1
        + (table.board is not None)
        + len(table.rounds)
        + sum(rnd.segments for rnd in table.rounds.values())
        for table in fold.tables.values()
    )


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


def _round(rnd: Round) -> RoundState:
    return RoundState(
        v=VERSION,
        table_id=rnd.table_id,
        round_id=rnd.round_id,
        game=rnd.game,
        ordinal=rnd.ordinal,
        decision=rnd.decision,
        phase=rnd.phase,
        suspensions=rnd.suspensions,
        last_seq=rnd.last_seq,
        event_ids=sorted(rnd.event_ids),
        dice=rnd.dice,
        discs=rnd.discs,
        fate_at=rnd.fate_at,
        segments=rnd.segments,
        corrections=[
            CorrectionState(
                dice=c.dice,
                discs=c.discs,
                void=c.odds is None,
                reason=c.reason,
                authorized_by=c.authorized_by,
                at=c.at,
            )
            for c in rnd.corrections
        ],
    )


def _new_segments(table: Table, rnd: Round) -> Iterable[Entry]:
    """The bets read for a round since the last write, as new segments (their lines verbatim)."""
    fresh = list(islice(rnd.seqs.values(), rnd.flushed, None))
    rnd.flushed += len(fresh)
    lines: list[msgspec.Raw] = []
    size = 0
    for bet_id in fresh:
        line = table.bets[bet_id]
        lines.append(msgspec.Raw(line))
        size += len(line) + 1
        if size >= SEGMENT_BYTES:
            yield _segment(rnd, lines)
            lines, size = [], 0
    if lines:
        yield _segment(rnd, lines)


def _segment(rnd: Round, lines: list[msgspec.Raw]) -> Entry:
    value = BetsState(
        v=VERSION, table_id=rnd.table_id, round_id=rnd.round_id, segment=rnd.segments, bets=lines
    )
    rnd.segments += 1
    return (bets_key(rnd.table_id, rnd.round_id, value.segment), ENCODER.encode(value))
