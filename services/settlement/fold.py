"""The fold: every input of `rounds` and `bets`, in any allowed interleaving, to the same records.

It is pure: no broker, clock, randomness or I/O. The stream processors and `croupier replay` both
feed it the raw messages they read, and write out exactly the records it returns.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

from msgspec import DecodeError
from msgspec.structs import replace

from schemas.codec import (
    NUL,
    Invalid,
    decode_bet,
    decode_event,
    decode_round,
    payload,
    read_event,
    rejected,
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
from schemas.records import (
    Record,
    Refund,
    RefundReason,
    Rejected,
    RejectReason,
    Settlement,
    TableStats,
)
from services import games
from services.settlement import corrections
from services.settlement.ids import REFUND, SETTLEMENT
from services.settlement.rounds import (
    FINAL,
    Correction,
    Fingerprint,
    Journal,
    Round,
    Table,
    fingerprint,
)
from services.signing.signature import NO_KEYS, TableKeys, Unverified, verify
from services.statistics.board import Board

DEFAULT_HORIZON: Final = 200
"""Decided rounds per table whose redeliveries are still recognised (see docs/DECISIONS.md)."""


Sink = list[Record]
"""Where the fold appends the records an input produces, in the order to write them."""


class Fold:
    """The settlement state of a set of tables, and the one function that evolves it."""

    def __init__(
        self, horizon: int = DEFAULT_HORIZON, *, journal: bool = False, keys: TableKeys = NO_KEYS
    ) -> None:
        """`journal`: keep what changed, for a shell that writes the state (`state.changes`);
        `keys`: the public keys of the signing tables, an input of the fold like the events."""
        if horizon < 1:
            raise ValueError("the horizon must keep at least one decided round per table")
        self.horizon = horizon
        self.keys = keys
        self.tables: dict[str, Table] = {}
        self.boards_changed: set[str] = set()
        self.pending = 0
        self.journal: Journal | None = Journal() if journal else None

    def feed(self, topic: str, value: bytes | None) -> list[Record]:
        """The records one message of `rounds` or `bets` produces, in the order to write them;
        a message with no value (a Kafka record's null) is rejected as malformed."""
        raw = payload(value)
        if topic == "bets":
            bet = decode_bet(raw)
            if isinstance(bet, Invalid):
                return [rejected(bet, topic, raw)]
            out: Sink = []
            self.read(raw, out, bet)
            return out
        event = decode_round(raw)
        if isinstance(event, Invalid):
            return [rejected(event, topic, raw)]
        return self.evolve(event, raw)

    def feed_line(self, raw: bytes) -> list[Record]:
        """Like `feed`, for a message whose topic its `type` tells (a replay line).

        A blank line (empty or only whitespace) is no message: it gives nothing.
        """
        out: Sink = []
        self.read(raw, out)
        return out

    def read(self, raw: bytes, out: Sink, event: AnyEvent | None = None) -> None:
        """The records of one message appended to `out`: a replay line, whose `type` tells its
        topic, or a message `feed` has decoded already (`event`).

        This is the path every bet takes, written out in one function: a bet costs no call but
        its decision's. A repeat is judged against the kept line of the first, decoded again
        (rare); a bet of a decided round is decided at once, any other waits for its round.
        """
        if event is None:
            try:
                event = read_event(raw)
            except (DecodeError, RecursionError):
                if not raw or raw.isspace():
                    return
                topic, invalid = decode_event(raw)
                assert isinstance(invalid, Invalid)
                out.append(rejected(invalid, topic, raw))
                return
            if NUL in raw:  # decode_event's own last check, taken only when the bytes spell one
                topic, refused = decode_event(raw)
                if isinstance(refused, Invalid):
                    out.append(rejected(refused, topic, raw))
                    return
        if not isinstance(event, BetPlaced):
            self._evolve(event, raw, out)
            return
        bet = event
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
        if other is not bet_id:  # bet_id is new to the table, so no round holds it yet
            out.append(
                _reject(
                    raw,
                    "bets",
                    "duplicate_seq",
                    f"seq {seq} of round {round_id!r} is already bet {other!r}; the first stands",
                )
            )
            return
        bets[bet_id] = raw
        journal = self.journal
        if journal is not None:
            journal.rounds.add(rnd)
            journal.accepted.append((bet, raw))
        if rnd.ordinal > table.bet_frontier:
            table.bet_frontier = rnd.ordinal
            if journal is not None:
                journal.tables.add(table)
            if len(table.decided) > self.horizon:  # bets read behind the rounds caught up
                self._forget(table)
        if rnd.phase in FINAL:
            decision = _decide(rnd, bet)
            out.append(decision)
            if rnd.corrections and isinstance(decision, Settlement):
                out.extend(corrections.adjustments(rnd, bet, 0))
            return
        rnd.waiting.append(bet)
        self.pending += 1

    def evolve(self, event: RoundEvent, raw: bytes) -> list[Record]:
        """Apply a round event; a bet waiting for this round's fate is decided with it."""
        out: Sink = []
        self._evolve(event, raw, out)
        return out

    def place(self, bet: BetPlaced, raw: bytes) -> list[Record]:
        """Read a confirmed bet: a repeat is judged, a bet of a decided round is decided now."""
        out: Sink = []
        self.read(raw, out, bet)
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

    def _evolve(self, event: RoundEvent, raw: bytes, out: Sink) -> None:
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
        if rnd is None or rnd.phase == "unopened":
            if isinstance(event, RoundCorrected | RoundVoided):
                out.append(_refuse(raw, self._unknown(event)))
                return
            if not isinstance(event, RoundOpened):
                out.append(_refuse(raw, f"{type_of(event)} for a round that was never opened"))
                return
            table = self._table(event.table_id)
            rnd = rnd or table.rounds.setdefault(
                event.round_id, Round(event.table_id, event.round_id)
            )
            rnd.game = event.game
            rnd.ordinal = table.opened
            table.opened += 1
            rnd.phase = "open"
            if rnd.seqs:
                table.bet_frontier = max(table.bet_frontier, rnd.ordinal)
            rnd.event_ids.add(event.event_id)
            self._journal(table, rnd, event, raw)
            return
        assert table is not None
        refusal = _transition(rnd, event)
        if refusal is not None:
            out.append(_refuse(raw, refusal, reason=_reason(refusal)))
            return
        rnd.event_ids.add(event.event_id)
        self._journal(None, rnd, event, raw)
        if isinstance(event, RoundCorrected | RoundVoided):
            self._correct(table, rnd, event, out)
            return
        if rnd.phase not in FINAL:
            return
        rnd.fate_at = event.at
        rnd.decision = table.decisions
        table.decisions += 1
        if self.journal is not None:
            self.journal.tables.add(table)
        if rnd.phase == "result":
            rnd.settlement = shared_settlement(table.table_id, rnd)
            rnd.odds = games.odds_board(rnd.game, rnd.outcome)
            self._board(table, rnd)
        out.extend([_decide(rnd, bet) for bet in rnd.waiting])  # no corrections yet
        self.pending -= len(rnd.waiting)
        rnd.waiting = []
        table.decided.append(rnd.round_id)
        self._forget(table)

    def _unknown(self, event: RoundCorrected | RoundVoided) -> str:
        return (
            f"{type_of(event)} for a round this fold does not hold: never opened, or decided "
            f"more than {self.horizon} rounds of its table ago and forgotten (the horizon, "
            "docs/DECISIONS.md)"
        )

    def _correct(
        self, table: Table, rnd: Round, event: RoundCorrected | RoundVoided, out: Sink
    ) -> None:
        """Decide every settled bet of the round again; those whose payout changes adjust."""
        n = len(rnd.corrections) + 1
        if isinstance(event, RoundCorrected):
            dice, discs = event.dice, event.discs
            odds = games.odds_board(rnd.game, rnd.outcome)
        else:
            dice = discs = odds = None
        rnd.corrections.append(
            Correction(
                n=n,
                dice=dice,
                discs=discs,
                odds=odds,
                reason=event.reason,
                authorized_by=event.authorized_by,
                at=event.at,
            )
        )
        for bet_id in rnd.seqs.values():
            bet = read_event(table.bets[bet_id])
            assert isinstance(bet, BetPlaced)
            if corrections.settled(rnd, bet):
                out.extend(corrections.adjustments(rnd, bet, n - 1))
        if table.board is not None:
            if odds is None:
                table.board.void(rnd.round_id)
            else:
                table.board.correct(rnd.round_id, dice, discs)
            self.boards_changed.add(table.table_id)
            if self.journal is not None:
                self.journal.boards.add(table)

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

    def _board(self, table: Table, rnd: Round) -> None:
        if table.board is None:
            table.board = Board(table.table_id, rnd.game, depth=self.horizon)
        table.board.record(rnd.game, rnd.round_id, rnd.dice, rnd.discs)
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
            if table.bet_frontier <= rnd.ordinal:
                return
            table.decided.popleft()
            del table.rounds[rnd.round_id]
            bets = table.bets
            for bet_id in rnd.seqs.values():
                del bets[bet_id]
            if self.journal is not None:
                self.journal.rounds.discard(rnd)
                self.journal.forgotten.append(rnd)


def _decide(rnd: Round, bet: BetPlaced) -> Settlement | Refund:
    """The first row of the contract's decision table that applies.

    A round's settlements share the round's part and the odds of every wager on its result,
    both set with the result.
    """
    settlement = rnd.settlement
    if settlement is None:
        return _refund(rnd, bet, "round_cancelled")
    if bet.seq > rnd.last_seq:
        return _refund(rnd, bet, "late_bet")
    kind = bet.kind
    pick = bet.pick
    odds = rnd.odds.get((kind, pick))
    if odds is None:
        return _refund(rnd, bet, "invalid_bet")
    result, num, den = odds
    bet_id = bet.bet_id
    stake = bet.stake
    return replace(
        settlement,
        settlement_id=SETTLEMENT + bet_id,
        bet_id=bet_id,
        player_id=bet.player_id,
        kind=kind,
        pick=pick,
        stake=stake,
        currency=bet.currency,
        result=result,
        payout=stake + stake * num // den,
    )


def shared_settlement(table_id: str, rnd: Round) -> Settlement:
    """The part of a settlement that every bet of a round with a result shares."""
    return Settlement(
        v=1,
        settlement_id="",
        bet_id="",
        round_id=rnd.round_id,
        table_id=table_id,
        player_id="",
        game=rnd.game,
        kind="",
        pick=(),
        stake=0,
        currency="",
        result="lose",
        payout=0,
        dice=rnd.dice,
        discs=rnd.discs,
        at=rnd.fate_at,
    )


def _transition(rnd: Round, event: RoundEvent) -> str | None:
    """Apply a round event to an opened round, or say why the life cycle forbids it."""
    final = rnd.phase in FINAL
    match event:
        case RoundOpened():
            return "round.opened for a round that is already open"
        case BettingClosed(last_seq=last_seq):
            if rnd.phase != "open" or rnd.suspensions:
                return f"round.betting_closed while the round is {_state(rnd)}"
            rnd.phase = "closed"
            rnd.last_seq = last_seq
        case RoundSuspended():
            if final:
                return f"round.suspended after the round is {rnd.phase}"
            rnd.suspensions += 1
        case RoundResumed():
            if final or not rnd.suspensions:
                return f"round.resumed while the round is {_state(rnd)}"
            rnd.suspensions -= 1
        case RoundReshaken():
            if rnd.phase != "closed":
                return f"round.reshaken while the round is {_state(rnd)}"
        case RoundResult(dice=dice, discs=discs):
            if rnd.phase != "closed" or rnd.suspensions:
                return f"round.result while the round is {_state(rnd)}"
            if (rnd.game == "xocdia") != (discs is not None):
                need = "discs" if rnd.game == "xocdia" else "dice"
                return f"{need}: a {rnd.game} round's result needs {need}"
            rnd.phase = "result"
            rnd.dice = dice
            rnd.discs = discs
            rnd.outcome = dice if dice is not None else discs  # type: ignore[assignment]
        case RoundCancelled():
            if final:
                return f"round.cancelled after the round is {rnd.phase}"
            rnd.phase = "cancelled"
        case RoundCorrected(dice=dice, discs=discs):
            if rnd.phase != "result":
                return f"round.corrected while the round is {_state(rnd)}"
            if (rnd.game == "xocdia") != (discs is not None):
                need = "discs" if rnd.game == "xocdia" else "dice"
                return f"{need}: a {rnd.game} round's correction needs {need}"
            outcome = dice if dice is not None else discs
            if outcome == rnd.outcome:
                return f"round.corrected to the outcome the round already has ({list(outcome)})"
            rnd.outcome = outcome  # type: ignore[assignment]
        case RoundVoided():
            if rnd.phase != "result":
                return f"round.voided while the round is {_state(rnd)}"
            rnd.phase = "voided"
    return None


def _state(rnd: Round) -> str:
    names = {"open": "open for bets", "closed": "closed for bets"}
    state = names.get(rnd.phase, rnd.phase)
    return f"{state} and suspended" if rnd.suspensions else state


def _reason(refusal: str) -> RejectReason:
    return "invalid_field" if refusal.startswith(("dice:", "discs:")) else "invalid_transition"


def _refund(rnd: Round, bet: BetPlaced, reason: RefundReason) -> Refund:
    return Refund(
        v=1,
        refund_id=REFUND + bet.bet_id,
        bet_id=bet.bet_id,
        round_id=bet.round_id,
        table_id=bet.table_id,
        player_id=bet.player_id,
        amount=bet.stake,
        currency=bet.currency,
        reason=reason,
        at=rnd.fate_at,
    )


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
