"""The read side's projection: a batch of croupier's committed messages as database changes.

Pure: messages in, rows out; no broker, database, clock or I/O. It re-decides nothing. Everything
comes from the `accepted` topic's journals (schemas/journal.py), where each worker transaction
puts exactly the inputs the settlement fold accepted (never a refused event, never a redelivery)
and the settlements, refunds and adjustments it commits, as their own topics have them. So each
message is applied as it stands, and the projector's stored positions make it apply once.

Its jobs are modules of their own: a bet's halves paired into its row (`pairing`, the rows in
`rows`), the decisions summed (`sums`); what it counts is plain facts, named as metrics by the
shell (`counters`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal, assert_never

import msgspec

from schemas import journal
from schemas.codec import Invalid, decode_event, nul_path, payload, spells_nul
from schemas.events import AnyEvent, BetPlaced, RoundEvent
from schemas.journal import Decision, Journal
from schemas.records import Adjustment, Rejected, TableStats
from services.history.pairing import Pairs
from services.history.rows import Row, adjusted
from services.history.sums import Decided, Sums

Source = Literal["accepted", "table-stats", "rejected"]
SOURCES: Final[tuple[Source, ...]] = ("accepted", "table-stats", "rejected")

_ACCEPTED: Final = msgspec.json.Decoder(Journal | AnyEvent)
"""A journal, or one accepted input alone (as workers before journals wrote the topic)."""
_STATS: Final = msgspec.json.Decoder(TableStats)
_REJECTED: Final = msgspec.json.Decoder(Rejected)


class Unreadable(ValueError):
    """A committed message the projector cannot decode (counted, logged and skipped)."""


@dataclass
class Changes:
    """What one batch changes: bets, round events to apply in order, boards, and what it counts.

    A batch of tens of thousands of bets builds no dict per bet, and no row it throws away
    (`pairing`)."""

    pairs: Pairs = field(default_factory=Pairs)
    sums: Sums = field(default_factory=Sums)
    adjustments: dict[str, Row] = field(default_factory=dict)
    round_events: list[tuple[RoundEvent, int]] = field(default_factory=list)
    boards: dict[str, TableStats] = field(default_factory=dict)
    raw_boards: dict[str, bytes] = field(default_factory=dict)
    read: Counter[Source] = field(default_factory=Counter)
    """Messages fed, by topic."""
    skipped: Counter[Source] = field(default_factory=Counter)
    """Messages (or a journal's inputs and decisions) unreadable and skipped, by topic."""
    rejections: Counter[str] = field(default_factory=Counter)
    """Records of the rejected topic, by reason."""
    causes: Counter[str] = field(default_factory=Counter)
    """Distinct adjustments, by cause."""
    unreadable: list[str] = field(default_factory=list)
    size: int = 0
    """How many messages were fed: inputs and decisions (a journal's each), other records."""

    def feed(self, source: Source, value: bytes | None, timestamp_ms: int = 0) -> None:
        """Add one message of a topic; `timestamp_ms` is its Kafka timestamp. One with no value
        (null) is unreadable, like any that does not decode."""
        self.read[source] += 1
        self.size += 1
        try:
            self._feed(source, payload(value), timestamp_ms)
        except (msgspec.DecodeError, Unreadable) as error:
            self._unreadable(source, error)

    def feed_all(self, source: Source, records: Sequence[Any]) -> None:
        """`feed` each of these Kafka records of a topic (their `value` and `timestamp`), in
        order: the same changes, with the decoder and the step chosen once for them all."""
        self.read[source] += len(records)
        self.size += len(records)
        match source:
            case "accepted":
                accept = self._accepted
                for record in records:
                    try:
                        accept(payload(record.value), record.timestamp)
                    except (msgspec.DecodeError, Unreadable) as error:
                        self._unreadable(source, error)
            case _:
                for record in records:
                    try:
                        self._feed(source, payload(record.value), record.timestamp)
                    except (msgspec.DecodeError, Unreadable) as error:
                        self._unreadable(source, error)

    @property
    def bets_read(self) -> int:
        """How many bet.placed and decisions the batch applies (each bet's first of each)."""
        return self.pairs.read

    @property
    def decided(self) -> dict[Decided, list[int]]:
        """The decisions summed by what the counters and the report tell apart (`sums`)."""
        return self.sums.decided

    def rounds_named(self) -> set[tuple[str, str]]:
        """Every round an input, a decision or an adjustment of this batch names."""
        named = {(e.table_id, e.round_id) for e, _ in self.round_events}
        named.update(self.pairs.rounds())
        named.update((r["table_id"], r["round_id"]) for r in self.adjustments.values())
        return named

    def players_named(self) -> set[str]:
        """Every player a bet, a decision or an adjustment of this batch names."""
        named = self.pairs.players()
        named.update(r["player_id"] for r in self.adjustments.values())
        return named

    def _unreadable(self, source: Source, error: Exception) -> None:
        self.skipped[source] += 1
        self.unreadable.append(f"{source}: {error}")

    def _feed(self, source: Source, raw: bytes, timestamp_ms: int) -> None:
        match source:
            case "accepted":
                self._accepted(raw, timestamp_ms)
            case "table-stats":
                stats = _STATS.decode(raw)
                if spells_nul(raw) and (where := nul_path(stats)) is not None:
                    raise Unreadable(f"a board whose {where} holds U+0000 (NUL)")
                self.boards[stats.table_id] = stats
                self.raw_boards[stats.table_id] = raw
            case "rejected":
                self.rejections[_REJECTED.decode(raw).reason] += 1
            case _:
                assert_never(source)

    def _accepted(self, raw: bytes, timestamp_ms: int) -> None:
        """A journal: its inputs, then its decisions, all at its Kafka timestamp."""
        try:
            read: Journal | AnyEvent | Invalid = _ACCEPTED.decode(raw)
        except (msgspec.DecodeError, RecursionError) as error:
            if raw.startswith(journal.PREFIX):
                raise Unreadable(f"a journal that does not decode: {error}") from error
            _, read = decode_event(raw)  # the slow path names what is wrong in an input
        match read:
            case Journal(inputs=inputs, decisions=decisions):
                self.size += len(inputs) + len(decisions) - 1
                if spells_nul(raw):
                    inputs, decisions = self._storable(inputs, decisions)
                if inputs:
                    self._inputs(inputs, timestamp_ms)
                if decisions:
                    self._decisions(decisions, timestamp_ms)
            case _:
                if spells_nul(raw) and (where := nul_path(read)) is not None:
                    raise Unreadable(f"an input whose {where} holds U+0000 (NUL)")
                self._input(read, timestamp_ms)

    def _storable(
        self, inputs: Sequence[AnyEvent], decisions: Sequence[Decision]
    ) -> tuple[tuple[AnyEvent, ...], tuple[Decision, ...]]:
        """A journal's inputs and decisions but those with a text that holds U+0000 (NUL), which
        no PostgreSQL text column stores: each one skipped is counted and logged as unreadable,
        and the rest of the journal applies. (Workers refuse such inputs, `schemas.codec.
        nul_field`; only a topic written by workers from before that can hold one.)"""
        storing = self._storing
        return tuple(e for e in inputs if storing(e)), tuple(d for d in decisions if storing(d))

    def _storing(self, item: AnyEvent | Decision) -> bool:
        where = nul_path(item)
        if where is not None:
            problem = f"a journal's {type(item).__name__} whose {where} holds U+0000 (NUL)"
            self._unreadable("accepted", Unreadable(problem))
        return where is None

    def _input(self, event: AnyEvent | Invalid, timestamp_ms: int) -> None:
        match event:
            case BetPlaced():
                self._inputs((event,), timestamp_ms)
            case Invalid(reason=reason, detail=detail):
                raise Unreadable(f"{reason}: {detail}")
            case _:
                self.round_events.append((event, timestamp_ms))

    def _inputs(self, inputs: Sequence[AnyEvent], timestamp_ms: int) -> None:
        """A journal's inputs, all committed at its Kafka timestamp: the bets paired, the round
        events kept in order."""
        for event in self.pairs.place(inputs):
            self._input(event, timestamp_ms)

    def _decisions(self, decisions: Sequence[Decision], timestamp_ms: int) -> None:
        """A journal's decisions, all committed at its Kafka timestamp: each bet's first paired
        and summed, the adjustments kept."""
        first, adjustments = self.pairs.decide(decisions, timestamp_ms)
        self.sums.add(first, timestamp_ms)
        for adjustment in adjustments:
            self._adjustment(adjustment)

    def _adjustment(self, adjustment: Adjustment) -> None:
        if adjustment.adjustment_id not in self.adjustments:
            self.adjustments[adjustment.adjustment_id] = adjusted(adjustment)
            self.causes[adjustment.cause] += 1
