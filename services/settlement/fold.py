"""The fold: every input of `rounds` and `bets`, in any allowed interleaving, to the same records.

It is pure: no broker, clock, randomness or I/O. The stream processors, `croupier replay`,
`croupier verify` and `croupier report` all feed it the raw messages they read (`Fold.feed`), and
write out exactly the records it returns.

A bet counts once: a redelivery (its bet_id again, the same content) gives nothing, other content
under its bet_id is rejected, and so is a second bet on a seq of its round; the first stands. A
bet of a decided round is decided as it is read; any other waits for its round's fate. Each table
keeps its last `horizon` decided rounds, whose redeliveries it still recognises and which may
still be corrected; older ones are forgotten once the table's bets have moved past them.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final, assert_never

from msgspec import DecodeError

from schemas.codec import (
    Invalid,
    decode_bet,
    decode_event,
    decode_round,
    read_event,
    rejected,
    spells_nul,
)
from schemas.events import SIGNED as MONEY_MOVING
from schemas.events import (
    AnyEvent,
    BetPlaced,
    BettingClosed,
    RoundCancelled,
    RoundCorrected,
    RoundEvent,
    RoundOpened,
    RoundReshaken,
    RoundResult,
    RoundResumed,
    RoundSuspended,
    RoundVoided,
    type_of,
)
from schemas.records import Record, Rejected, RejectReason, Settlement, TableStats
from services.settlement import corrections
from services.settlement.decisions import refund, settle
from services.settlement.lifecycle import transition
from services.settlement.misrouted import Elsewhere, Homes
from services.settlement.rounds import (
    DECIDED,
    Cancelled,
    Closed,
    Fingerprint,
    Journal,
    Open,
    Round,
    Settled,
    Table,
    Unopened,
    Voided,
    fingerprint,
)
from services.signing.signature import NO_KEYS, TableKeys, Unverified, verify
from services.statistics.board import Board

DEFAULT_HORIZON: Final = 200
"""Decided rounds per table whose redeliveries are still recognised (see docs/DECISIONS.md)."""


Sink = list[Record]
"""Where the fold appends the records an input produces, in the order to write them."""


class Fold:
    """The settlement state of a set of tables, and the one function that evolves it (`feed`)."""

    def __init__(
        self, horizon: int = DEFAULT_HORIZON, *, journal: bool = False, keys: TableKeys = NO_KEYS
    ) -> None:
        """`journal`: keep what changed, for a shell that writes the state (`capture.Layout`);
        `keys`: the public keys of the signing tables, an input of the fold like the events."""
        if horizon < 1:
            raise ValueError("the horizon must keep at least one decided round per table")
        self.horizon = horizon
        self.keys = keys
        self.tables: dict[str, Table] = {}
        self.boards_changed: set[str] = set()
        self.pending = 0
        self.journal: Journal | None = Journal() if journal else None

    def feed(
        self,
        topic: str | None,
        value: bytes | None,
        out: Sink | None = None,
        *,
        homes: Homes | None = None,
        partition: int = 0,
    ) -> Sink:
        """Append the records one message produces to `out` (a new list if None), in the order to
        write them, and return that list.

        `topic` is the topic the message was read from, `rounds` or `bets`: a message that is no
        event of its topic, or has no value (a Kafka record's null), is rejected. None is a replay
        line, whose `type` tells its topic; a blank line (empty or white space) gives nothing.

        With `homes`, the message was read from `partition` of its topic, and one that names a
        table of another partition raises Elsewhere, folded not here but there (`misrouted`).
        """
        if out is None:
            out = []
        raw = b"" if value is None else value
        event: AnyEvent | None
        if topic is None:
            try:
                event = read_event(raw)
            except (DecodeError, RecursionError):
                event = None
            if event is None or spells_nul(raw):  # not an event, or it may hold a NUL
                if not raw or raw.isspace():
                    return out
                line_topic, checked = decode_event(raw)
                if isinstance(checked, Invalid):
                    out.append(rejected(checked, line_topic, raw))
                    return out
                event = checked
        else:
            decoded = decode_bet(raw) if topic == "bets" else decode_round(raw)
            if isinstance(decoded, Invalid):
                home = None if homes is None else homes.of(value)
                if home is not None and home != partition:
                    raise Elsewhere(home)
                out.append(rejected(decoded, topic, raw))
                return out
            if homes is not None:
                home = homes.home(decoded.table_id)
                if home is not None and home != partition:
                    raise Elsewhere(home)
            event = decoded
        if isinstance(event, BetPlaced):
            self._place(event, raw, out)
        else:
            self._evolve(event, raw, out)
        return out

    def stats(self, table_id: str) -> TableStats | None:
        """The table's statistics board, or None while it has no round with a result."""
        table = self.tables.get(table_id)
        if table is None or table.board is None:
            return None
        return table.board.stats()

    def waiting(self) -> Iterator[BetPlaced]:
        """Every bet still waiting for its round's fate, table by table, in reading order."""
        for table in self.tables.values():
            for rnd in table.rounds.values():
                yield from rnd.waiting

    def _place(self, bet: BetPlaced, raw: bytes, out: Sink) -> None:
        """Read a bet: a repeat is judged against the kept line of the first, a bet of a decided
        round is decided at once, any other waits for its round."""
        table = self.tables.get(bet.table_id)
        if table is None:
            table = self._table(bet.table_id)
        bet_id = bet.bet_id
        bets = table.bets
        if bet_id in bets:
            first = _fingerprint(bets[bet_id])
            again = fingerprint(bet)
            if first != again:
                out.append(_conflict(raw, bet_id, first, again))
            return
        round_id = bet.round_id
        rnd = table.rounds.get(round_id)
        if rnd is None:
            rnd = table.rounds[round_id] = Round(bet.table_id, round_id)
        seq = bet.seq
        other = rnd.seqs.setdefault(seq, bet_id)
        if other != bet_id:
            detail = f"seq {seq} of round {round_id!r} is already bet {other!r}; the first stands"
            out.append(_reject(raw, "bets", "duplicate_seq", detail))
            return
        bets[bet_id] = raw
        journal = self.journal
        if journal is not None:
            journal.rounds.add(rnd)
            journal.accepted.append((bet, raw))
        match rnd.life:
            case Settled() | Voided() as life:
                if life.ordinal > table.bet_frontier:
                    self._reached(table, life.ordinal)
                decision = settle(life, bet)
                out.append(decision)
                if life.corrections and isinstance(decision, Settlement):
                    out.extend(corrections.adjustments(life, bet, 0))
                return
            case Cancelled() as life:
                if life.ordinal > table.bet_frontier:
                    self._reached(table, life.ordinal)
                out.append(refund(life, bet, "round_cancelled"))
                return
            case Open() | Closed() as life:
                if life.ordinal > table.bet_frontier:
                    self._reached(table, life.ordinal)
            case Unopened():
                pass
            case _:
                assert_never(rnd.life)
        rnd.waiting.append(bet)
        self.pending += 1

    def _reached(self, table: Table, ordinal: int) -> None:
        """A bet of the table's later round `ordinal` was read: the table's bets reached it."""
        table.bet_frontier = ordinal
        if self.journal is not None:
            self.journal.tables.add(table)
        if len(table.decided) > self.horizon:  # bets read behind the rounds caught up
            self._forget(table)

    def _evolve(self, event: RoundEvent, raw: bytes, out: Sink) -> None:
        """Apply a round event; a signed table's money-moving event must verify first."""
        keys = self.keys
        if keys and isinstance(event, MONEY_MOVING) and event.table_id in keys:
            verdict = verify(keys[event.table_id], event)
            if isinstance(verdict, Unverified):  # checked first: a forgery is told, not ignored
                out.append(_refuse(raw, verdict.detail, reason="bad_signature"))
                return
        table = self.tables.get(event.table_id)
        rnd = None if table is None else table.rounds.get(event.round_id)
        if rnd is not None and event.event_id in rnd.event_ids:
            return
        if rnd is None or isinstance(rnd.life, Unopened):
            self._open(rnd, event, raw, out)
            return
        assert table is not None
        refusal = transition(rnd, event, table.decisions)
        if refusal is not None:
            out.append(_refuse(raw, refusal, reason=_reason(refusal)))
            return
        rnd.event_ids.add(event.event_id)
        self._journal(None, rnd, event, raw)
        match event:
            case RoundResult() | RoundCancelled():
                self._decided(table, rnd, out)
            case RoundCorrected() | RoundVoided():
                self._corrected(table, rnd, out)
            case (
                RoundOpened()
                | BettingClosed()
                | RoundSuspended()
                | RoundResumed()
                | RoundReshaken()
            ):
                pass
            case _:
                assert_never(event)

    def _open(self, rnd: Round | None, event: RoundEvent, raw: bytes, out: Sink) -> None:
        """Open a round the fold holds no opened round of; any other event for it is refused."""
        match event:
            case RoundOpened():
                table = self._table(event.table_id)
                if rnd is None:
                    rnd = table.rounds[event.round_id] = Round(event.table_id, event.round_id)
                rnd.life = Open(event.game, table.opened)
                table.opened += 1
                if rnd.seqs:
                    table.bet_frontier = max(table.bet_frontier, rnd.life.ordinal)
                rnd.event_ids.add(event.event_id)
                self._journal(table, rnd, event, raw)
            case RoundCorrected() | RoundVoided():
                out.append(_refuse(raw, self._unknown(event)))
            case (
                BettingClosed()
                | RoundSuspended()
                | RoundResumed()
                | RoundReshaken()
                | RoundResult()
                | RoundCancelled()
            ):
                out.append(_refuse(raw, f"{type_of(event)} for a round that was never opened"))
            case _:
                assert_never(event)

    def _decided(self, table: Table, rnd: Round, out: Sink) -> None:
        """The round's fate came: its waiting bets are decided, in the order they were read."""
        life = rnd.life
        assert isinstance(life, Settled | Cancelled), "decided by its result or its cancellation"
        table.decisions += 1
        if self.journal is not None:
            self.journal.tables.add(table)
        if isinstance(life, Settled):
            self._board(table, rnd.round_id, life)
            out.extend([settle(life, bet) for bet in rnd.waiting])  # no corrections yet
        else:
            out.extend([refund(life, bet, "round_cancelled") for bet in rnd.waiting])
        self.pending -= len(rnd.waiting)
        rnd.waiting = []
        table.decided.append(rnd.round_id)
        self._forget(table)

    def _corrected(self, table: Table, rnd: Round, out: Sink) -> None:
        """Decide every settled bet of the round again; those whose payout changes adjust."""
        life = rnd.life
        assert isinstance(life, Settled | Voided), "only a round with a result is corrected"
        c = life.corrections[-1]
        for bet_id in rnd.seqs.values():
            bet = read_event(table.bets[bet_id])
            assert isinstance(bet, BetPlaced)
            if corrections.settled(life, bet):
                out.extend(corrections.adjustments(life, bet, c.n - 1))
        if table.board is not None:
            if c.odds is None:
                table.board.void(rnd.round_id)
            else:
                table.board.correct(rnd.round_id, c.dice, c.discs)
            self.boards_changed.add(table.table_id)
            if self.journal is not None:
                self.journal.boards.add(table)

    def _unknown(self, event: RoundCorrected | RoundVoided) -> str:
        return (
            f"{type_of(event)} for a round this fold does not hold: never opened, or decided "
            f"more than {self.horizon} rounds of its table ago and forgotten (the horizon, "
            "docs/DECISIONS.md)"
        )

    def _journal(self, table: Table | None, rnd: Round, event: RoundEvent, raw: bytes) -> None:
        """Note an accepted round event (and, with `table`, a change of the table's own state)."""
        journal = self.journal
        if journal is not None:
            journal.rounds.add(rnd)
            journal.accepted.append((event, raw))
            if table is not None:
                journal.tables.add(table)

    def _table(self, table_id: str) -> Table:
        table = self.tables.get(table_id)
        if table is None:
            table = self.tables[table_id] = Table(table_id)
            if self.journal is not None:
                self.journal.tables.add(table)
        return table

    def _board(self, table: Table, round_id: str, life: Settled) -> None:
        if table.board is None:
            table.board = Board(table.table_id, life.game, depth=self.horizon)
        table.board.record(life.game, round_id, life.result.dice, life.result.discs)
        self.boards_changed.add(table.table_id)
        if self.journal is not None:
            self.journal.boards.add(table)

    def _forget(self, table: Table) -> None:
        """Drop the oldest decided rounds past the horizon once the table's bets have moved on.

        Called when a round is decided and when the table's bets reach a later round, so a fold
        that read `rounds` far ahead of `bets` (a catch-up) sheds the backlog as the bets come.
        """
        while len(table.decided) > self.horizon:
            rnd = table.rounds[table.decided[0]]
            assert isinstance(rnd.life, DECIDED)
            if table.bet_frontier <= rnd.life.ordinal:
                return
            table.decided.popleft()
            del table.rounds[rnd.round_id]
            bets = table.bets
            for bet_id in rnd.seqs.values():
                del bets[bet_id]
            if self.journal is not None:
                self.journal.rounds.discard(rnd)
                self.journal.forgotten.append(rnd)


def _reason(refusal: str) -> RejectReason:
    return "invalid_field" if refusal.startswith(("dice:", "discs:")) else "invalid_transition"


def _refuse(raw: bytes, detail: str, reason: RejectReason = "invalid_transition") -> Rejected:
    return _reject(raw, "rounds", reason, detail)


def _reject(raw: bytes, topic: str, reason: RejectReason, detail: str) -> Rejected:
    return rejected(Invalid(reason=reason, detail=detail), topic, raw)


_FIELDS: Final = ("round_id", "player_id", "seq", "kind", "pick", "stake", "currency")


def _fingerprint(kept: bytes) -> Fingerprint:
    """The fingerprint of a bet from the line it was read from (kept for that)."""
    bet = read_event(kept)
    assert isinstance(bet, BetPlaced)
    return fingerprint(bet)


def _conflict(raw: bytes, bet_id: str, first: Fingerprint, again: Fingerprint) -> Rejected:
    names = [name for name, a, b in zip(_FIELDS, first, again, strict=True) if a != b]
    return _reject(
        raw,
        "bets",
        "conflicting_duplicate",
        f"bet_id {bet_id!r} was already read with different content "
        f"(differs in {', '.join(names)}); the first stands",
    )
