"""The read side's projection: every topic folded into bet histories, round recalls and boards.

Pure: messages in, views out; no broker, clock or I/O. Reading the same message twice changes no
view, so the shell may re-read the topics from their beginning after any restart. Which round
events and bets count is judged by the settlement fold itself (the one implementation of the round
life cycle and of repeats); what was decided comes only from what croupier committed to
`settlements` and `refunds`, never from a second computation.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Callable
from typing import Final, Literal, assert_never

import msgspec

from schemas.codec import Invalid, decode_bet, decode_round
from schemas.records import Record, Refund, Rejected, Settlement, TableStats
from services.history.tally import Tally
from services.history.views import Bet, Key, Round
from services.settlement.fold import DEFAULT_HORIZON, Fold

Source = Literal["rounds", "bets", "settlements", "refunds", "table-stats", "rejected"]
SOURCES: Final[tuple[Source, ...]] = (
    "rounds",
    "bets",
    "settlements",
    "refunds",
    "table-stats",
    "rejected",
)

_SETTLEMENT: Final = msgspec.json.Decoder(Settlement)
_REFUND: Final = msgspec.json.Decoder(Refund)
_STATS: Final = msgspec.json.Decoder(TableStats)
_REJECTED: Final = msgspec.json.Decoder(Rejected)


def _refused(records: list[Record]) -> bool:
    return any(isinstance(record, Rejected) for record in records)


class Projection:
    """The views of the read side, and the one function that evolves them: `feed`."""

    def __init__(self, horizon: int = DEFAULT_HORIZON) -> None:
        self.fold = Fold(horizon=horizon)
        self.bets: dict[str, Bet] = {}
        self.players: dict[str, list[Key]] = {}
        self.rounds: dict[tuple[str, str], Round] = {}
        self.boards: dict[str, TableStats] = {}
        self.tally = Tally()
        self.pending = 0

    def feed(self, source: Source, raw: bytes, timestamp_ms: int = 0) -> None:
        """Fold one message of a topic in; `timestamp_ms` is its Kafka timestamp."""
        self.tally.events_in[source] += 1
        try:
            match source:
                case "rounds":
                    self._round_event(raw, timestamp_ms)
                case "bets":
                    self._bet_event(raw)
                case "settlements":
                    self._decision(_SETTLEMENT.decode(raw), timestamp_ms)
                case "refunds":
                    self._decision(_REFUND.decode(raw), timestamp_ms)
                case "table-stats":
                    stats = _STATS.decode(raw)
                    self.boards[stats.table_id] = stats
                case "rejected":
                    self.tally.rejections[_REJECTED.decode(raw).reason] += 1
                case _:
                    assert_never(source)
        except msgspec.DecodeError:
            self.tally.unreadable[source] += 1

    def history(self, player_id: str) -> list[Key] | None:
        """The sort keys of a player's bets, oldest first; None for a player never seen."""
        return self.players.get(player_id)

    def round(self, table_id: str, round_id: str) -> Round | None:
        return self.rounds.get((table_id, round_id))

    def round_bets(self, rnd: Round) -> list[Bet]:
        """A round's bets in the order the table confirmed them."""
        bets = [self.bets[bet_id] for bet_id in rnd.bet_ids]
        bets.sort(key=lambda bet: (bet.seq is None, bet.seq or 0, bet.bet_id))
        return bets

    def _round(self, table_id: str, round_id: str) -> Round:
        key = (table_id, round_id)
        rnd = self.rounds.get(key)
        if rnd is None:
            rnd = self.rounds[key] = Round(table_id, round_id)
        return rnd

    def _round_event(self, raw: bytes, timestamp_ms: int) -> None:
        event = decode_round(raw)
        if isinstance(event, Invalid) or _refused(self.fold.evolve(event, raw)):
            return
        rnd = self._round(event.table_id, event.round_id)
        if event.event_id in rnd.event_ids:
            return
        final = rnd.phase in ("result", "cancelled")
        rnd.apply(event)
        if not final and rnd.phase in ("result", "cancelled"):
            rnd.fate_ts = timestamp_ms
            for decided in rnd.unobserved:
                self.tally.latency.observe(decided - timestamp_ms)
            rnd.unobserved.clear()

    def _bet_event(self, raw: bytes) -> None:
        event = decode_bet(raw)
        if isinstance(event, Invalid) or _refused(self.fold.place(event, raw)):
            return
        bet = self.bets.get(event.bet_id)
        if bet is not None and bet.placed:
            return
        if bet is None:
            bet = self._new(event.bet_id, event.player_id, event.table_id, event.round_id)
        self._rekey(bet, lambda: bet.place(event))
        if bet.decision is None:
            self.pending += 1

    def _decision(self, decision: Settlement | Refund, timestamp_ms: int) -> None:
        bet = self.bets.get(decision.bet_id)
        if bet is None:
            bet = self._new(
                decision.bet_id, decision.player_id, decision.table_id, decision.round_id
            )
        if bet.decision is not None:
            return
        if bet.placed:
            self.pending -= 1
        self._rekey(bet, lambda: bet.decide(decision))
        match decision:
            case Settlement(result=result):
                self.tally.decisions[("settlement", result)] += 1
            case Refund(reason=reason):
                self.tally.decisions[("refund", reason)] += 1
        rnd = self._round(decision.table_id, decision.round_id)
        if rnd.fate_ts is not None:
            self.tally.latency.observe(timestamp_ms - rnd.fate_ts)
        else:
            rnd.unobserved.append(timestamp_ms)

    def _new(self, bet_id: str, player_id: str, table_id: str, round_id: str) -> Bet:
        bet = self.bets[bet_id] = Bet(bet_id, player_id, table_id, round_id)
        self._round(table_id, round_id).bet_ids.add(bet_id)
        return bet

    def _rekey(self, bet: Bet, change: Callable[[], None]) -> None:
        """Apply a change to a bet, keeping its player's history in order."""
        keys = self.players.setdefault(bet.player_id, [])
        old = bet.key()
        index = bisect_left(keys, old)
        if index < len(keys) and keys[index] == old:
            del keys[index]
        change()
        insort(keys, bet.key())
