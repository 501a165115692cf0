"""What a fold writes of its state: its changes, all of it, or all of it again in parts (pure).

`changes` gives what the fold changed since the last call (a forgotten round's keys as tombstones,
value None): what a batch writes is proportional to what the batch changed, never to the whole
state. `snapshot` gives every entry of the state, `Rewrite` the same spread over transactions.
The entries' format is `state`'s; the same state always gives the same bytes (docs/DESIGN.md,
"The state store").
"""

from __future__ import annotations

from collections import deque
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


class Rewrite:
    """The whole state written again, a part in each transaction, from offset `start` of the
    task's state partition on; once `done`, every entry live then was written at or after `start`,
    so a restore can read the partition from there (docs/DESIGN.md, "Durable state").

    A part is a table (its entry and board) or a round (its header and its bets joined into as few
    segments as fit, the segments past the new count tombstoned). Each transaction may write
    `credit` bytes of parts (credit not used carries over): the rewrite costs the transactions
    that earn it, in proportion to what they wrote, never one large transaction.
    """

    def __init__(self, fold: Fold, start: int) -> None:
        self.start = start
        self.credit = 0
        self.written = 0
        self.records = 0
        self._parts: deque[tuple[str, str | None]] = deque()
        for table_id in sorted(fold.tables):
            self._parts.append((table_id, None))
            self._parts.extend((table_id, r) for r in sorted(fold.tables[table_id].rounds))

    @property
    def done(self) -> bool:
        return not self._parts

    def step(self, fold: Fold, credit: int) -> list[Entry]:
        """The parts this transaction writes, given `credit` more bytes (after `changes`)."""
        self.credit += credit
        entries: list[Entry] = []
        while self._parts:
            table_id, round_id = self._parts[0]
            table = fold.tables.get(table_id)
            rnd = None if table is None or round_id is None else table.rounds.get(round_id)
            if table is None or (round_id is not None and rnd is None):
                self._parts.popleft()  # forgotten since: its tombstones were written
                continue
            assert table is not None
            size = _size(table, rnd)
            if size > self.credit:
                break
            self._parts.popleft()
            part = _table_entries(table) if rnd is None else _round_entries(table, rnd)
            self.credit -= size
            self.written += sum(len(key) + len(value or b"") for key, value in part)
            self.records += len(part)
            entries.extend(part)
        return entries


def _size(table: Table, rnd: Round | None) -> int:
    """About the bytes a part takes (its bets' lines, or a table's board)."""
    if rnd is None:
        return 256 + (0 if table.board is None else 128 * len(table.board.rounds))
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
