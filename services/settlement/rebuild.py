"""The fold built back from its state's entries, exactly as it was (pure): the inverse of
`capture`, over the format of `state` (docs/DESIGN.md, "The state store").

A record leaves -1 (a number) or empty (a text) where its round's phase knows nothing yet; the
round's phase comes back typed, with only what that phase knows.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator, Mapping
from typing import Final, assert_never

import msgspec

from schemas.codec import read_event
from schemas.events import BetPlaced
from services import games
from services.games.model import Odds, Outcome, Pick
from services.settlement import decisions
from services.settlement.fold import Fold
from services.settlement.rounds import (
    DECIDED,
    Cancelled,
    Closed,
    Correction,
    Life,
    Open,
    Round,
    Settled,
    Table,
    Unopened,
    Voided,
    outcome_of,
)
from services.settlement.state import (
    BetsState,
    BoardState,
    CorrectionState,
    RoundState,
    StateError,
    TableState,
    bets_key,
    board_key,
    decode,
    round_key,
    table_key,
)
from services.signing.signature import NO_KEYS, TableKeys
from services.statistics.board import WINDOW, Board


def fold_of(
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
        value = decode(key, raw)
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
        if isinstance(rnd.life, DECIDED):
            decided.setdefault(table_id, []).append((rnd.life.decision, round_id))
    if segments:
        table_id, round_id, segment = sorted(segments)[0]
        raise StateError(f"bets segment {segment} of round {round_id!r} without its round")
    for table_id, order in decided.items():
        fold.tables[table_id].decided = deque(round_id for _, round_id in sorted(order))
    return fold


def _restore_round(kept: RoundState) -> Round:
    rnd = Round(kept.table_id, kept.round_id)
    rnd.event_ids = set(kept.event_ids)
    rnd.life = _life(rnd, kept)
    return rnd


def _life(rnd: Round, kept: RoundState) -> Life:
    """The round's phase and what it knows, from its record (where -1 and empty stand for what
    its phase does not know)."""
    outcome = outcome_of(kept.dice, kept.discs)
    resulted = kept.phase in ("result", "voided")
    if outcome is not None and not resulted:
        raise StateError(f"round {kept.round_id!r} has an outcome but no result")
    if kept.corrections and not resulted:
        raise StateError(f"round {kept.round_id!r} has corrections but no result")
    game, ordinal, suspensions = kept.game, kept.ordinal, kept.suspensions
    match kept.phase:
        case "unopened":
            return Unopened()
        case "open":
            return Open(game, ordinal, suspensions)
        case "closed":
            return Closed(game, ordinal, suspensions, kept.last_seq)
        case "cancelled":
            last_seq = None if kept.last_seq == -1 else kept.last_seq
            return Cancelled(
                game, ordinal, suspensions, last_seq, decision=kept.decision, fate_at=kept.fate_at
            )
        case "result" | "voided":
            if outcome is None:
                raise StateError(f"round {kept.round_id!r} has a result but no outcome")
            odds = _LazyOdds(game, outcome)
            result = decisions.result(rnd, game, kept.fate_at, kept.dice, kept.discs, odds)
            corrections = [_correction(kept, n, c) for n, c in enumerate(kept.corrections, 1)]
            phase = Settled if kept.phase == "result" else Voided
            return phase(
                game,
                ordinal,
                kept.last_seq,
                decision=kept.decision,
                fate_at=kept.fate_at,
                result=result,
                corrections=corrections,
            )
        case _:
            assert_never(kept.phase)


def _correction(kept: RoundState, n: int, c: CorrectionState) -> Correction:
    corrected = None
    if not c.void:
        outcome = outcome_of(c.dice, c.discs)
        if outcome is None:
            raise StateError(f"round {kept.round_id!r}: correction {n} has no outcome")
        corrected = _LazyOdds(kept.game, outcome)
    return Correction(
        n=n,
        dice=c.dice,
        discs=c.discs,
        odds=corrected,
        reason=c.reason,
        authorized_by=c.authorized_by,
        at=c.at,
    )


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
    if isinstance(rnd.life, DECIDED):
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
