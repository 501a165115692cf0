"""The read side's projection: a batch of croupier's committed messages as database changes.

Pure: messages in, rows out; no broker, database, clock or I/O. It re-decides nothing. Everything
comes from the `accepted` topic's journals (schemas/journal.py), where each worker transaction
puts exactly the inputs the settlement fold accepted (never a refused event, never a redelivery)
and the settlements, refunds and adjustments it commits, as their own topics have them. So each
message is applied as it stands, and the projector's stored positions make it apply once.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from operator import itemgetter
from typing import Any, Final, Literal, assert_never

import msgspec

from schemas import journal
from schemas.codec import NUL, Invalid, decode_event, nul_path, payload
from schemas.events import AnyEvent, BetPlaced, RoundEvent
from schemas.journal import Decision, Journal
from schemas.records import Adjustment, Refund, Rejected, Settlement, TableStats
from services.history.tally import LATENCY, LATENCY_BUCKETS_MS
from services.history.views import micros, parse_micros

Source = Literal["accepted", "table-stats", "rejected"]
SOURCES: Final[tuple[Source, ...]] = ("accepted", "table-stats", "rejected")

_ACCEPTED: Final = msgspec.json.Decoder(Journal | AnyEvent)
"""A journal, or one accepted input alone (as workers before journals wrote the topic)."""
_STATS: Final = msgspec.json.Decoder(TableStats)
ESCAPE: Final = b"\\"
"""What every escape in JSON text begins with, U+0000's (`NUL`) too: a journal without one is
told in one pass of memchr, cheaper than a search for `NUL` through its every byte."""
_REJECTED: Final = msgspec.json.Decoder(Rejected)
_ENCODE: Final = msgspec.json.encode
Row = dict[str, Any]
CounterKey = tuple[str, str]
"""A counter's metric name and its labels, rendered as in the Prometheus exposition."""


class Unreadable(ValueError):
    """A committed message the projector cannot decode (counted, logged and skipped)."""


@dataclass
class Changes:
    """What one batch changes: bets, round events to apply in order, boards, counters to add.

    A bet's halves are kept as read (its bet.placed, its decision) and its row, a tuple in the
    order of `BET_COLUMNS` (what the database's COPY takes as it stands), is made once: when its
    second half is read (`whole`), or at the end of the batch for a bet whose other half is in
    another batch (`pending`, `parts`). A batch of tens of thousands of bets builds no dict per
    bet, and no row it throws away.
    """

    halves: dict[BetKey, Half] = field(default_factory=dict)
    """Every bet the batch names, by key: its bet.placed while its decision is not read, its
    decision (with its Kafka timestamp) while its bet.placed is not, `WHOLE` once both are (then
    its row is in `whole`). The first of each half counts; a half read again changes nothing."""
    whole: list[BetRow] = field(default_factory=list)
    """The rows of the bets whose placement and decision are both in this batch, in the order
    they became whole (each once): final as soon as made, so they can be encoded while the
    batch is still being read."""
    adjustments: dict[str, Row] = field(default_factory=dict)
    round_events: list[tuple[RoundEvent, int]] = field(default_factory=list)
    boards: dict[str, TableStats] = field(default_factory=dict)
    raw_boards: dict[str, bytes] = field(default_factory=dict)
    counts: Counter[CounterKey] = field(default_factory=Counter)
    settled: dict[int, dict[SettledKey, list[int]]] = field(default_factory=dict)
    """The settlements by Kafka timestamp and by what the counters and the report tell apart
    (`SettledKey`): [bets, stakes, payouts]. Few distinct, each bet added once here; how long a
    decision waited, which the key leaves out, is told once a key and timestamp, in `decided`,
    not once a bet."""
    refunded: dict[int, dict[RefundedKey, list[int]]] = field(default_factory=dict)
    """The refunds likewise (`RefundedKey`): [bets, amounts, 0]."""
    unreadable: list[str] = field(default_factory=list)
    size: int = 0
    """How many messages were fed: inputs and decisions (a journal's each), other records."""

    def feed(self, source: Source, value: bytes | None, timestamp_ms: int = 0) -> None:
        """Add one message of a topic; `timestamp_ms` is its Kafka timestamp. One with no value
        (null) is unreadable, like any that does not decode."""
        self.counts[_EVENTS[source]] += 1
        self.size += 1
        try:
            self._feed(source, payload(value), timestamp_ms)
        except (msgspec.DecodeError, Unreadable) as error:
            self._unreadable(source, error)

    def feed_all(self, source: Source, records: Sequence[Any]) -> None:
        """`feed` each of these Kafka records of a topic (their `value` and `timestamp`), in
        order: the same changes, with the decoder and the step chosen once for them all."""
        self.counts[_EVENTS[source]] += len(records)
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

    def pending(self) -> list[BetRow]:
        """The rows of the bets placed in this batch and not decided in it, by key."""
        placed = [(k, v) for k, v in self.halves.items() if type(v) is BetPlaced]
        return [placement(bet) for _, bet in sorted(placed, key=_FIRST)]

    def parts(self) -> list[BetRow]:
        """The rows of the decisions of bets not placed in this batch (placed before, or never,
        as a late bet's refund), by key: what a decision alone tells of its bet."""
        alone = [(k, v) for k, v in self.halves.items() if type(v) is tuple]
        return [decided(*read) for _, read in sorted(alone, key=_FIRST)]

    @property
    def bets_read(self) -> int:
        """How many bet.placed and decisions the batch applies (each bet's first of each)."""
        return len(self.halves) + len(self.whole)

    def rounds_named(self) -> set[tuple[str, str]]:
        """Every round an input, a decision or an adjustment of this batch names."""
        named = {(e.table_id, e.round_id) for e, _ in self.round_events}
        named.update(map(_KEY_ROUND, self.halves))  # a whole bet's decision's too
        named.update((r["table_id"], r["round_id"]) for r in self.adjustments.values())
        return named

    def players_named(self) -> set[str]:
        """Every player a bet, a decision or an adjustment of this batch names."""
        named = set(map(_ROW_PLAYER, self.whole))  # as its decision names the player
        for value in self.halves.values():
            if type(value) is BetPlaced:
                named.add(value.player_id)
            elif type(value) is tuple:
                named.add(value[0].player_id)
        named.update(r["player_id"] for r in self.adjustments.values())
        return named

    @property
    def decided(self) -> dict[Decided, list[int]]:
        """The decisions summed by what the counters and the report tell apart (`Decided`): the
        milliseconds each waited, from the `at` of the round event that decided it (copied into
        the decision) to its commit (its Kafka timestamp; a clock behind reads 0), told once
        for each distinct key."""
        out: dict[Decided, list[int]] = {}
        for timestamp_ms, settled in self.settled.items():
            for (result, table, rnd, at, currency, game, kind, pick), sums in settled.items():
                waited = _waited(timestamp_ms, at)
                _add(out, (result, True, waited, table, rnd, at, currency, game, kind, pick), sums)
        for timestamp_ms, refunded in self.refunded.items():
            for (reason, table, rnd, at, currency), sums in refunded.items():
                waited = _waited(timestamp_ms, at)
                _add(out, (reason, False, waited, table, rnd, at, currency, None, None, None), sums)
        return out

    def _unreadable(self, source: Source, error: Exception) -> None:
        self.counts[_UNREADABLE[source]] += 1
        self.unreadable.append(f"{source}: {error}")

    def _feed(self, source: Source, raw: bytes, timestamp_ms: int) -> None:
        match source:
            case "accepted":
                self._accepted(raw, timestamp_ms)
            case "table-stats":
                stats = _STATS.decode(raw)
                if NUL in raw and (where := nul_path(stats)) is not None:
                    raise Unreadable(f"a board whose {where} holds U+0000 (NUL)")
                self.boards[stats.table_id] = stats
                self.raw_boards[stats.table_id] = raw
            case "rejected":
                reason = _REJECTED.decode(raw).reason
                self.counts[("croupier_read_rejections_total", _labels(reason=reason))] += 1
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
                if ESCAPE in raw and NUL in raw:
                    inputs, decisions = self._storable(inputs, decisions)
                if inputs:
                    self._inputs(inputs, timestamp_ms)
                if decisions:
                    self._decisions(decisions, timestamp_ms)
            case _:
                if NUL in raw and (where := nul_path(read)) is not None:
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
        """A journal's inputs, all committed at its Kafka timestamp: each bet.placed (the most of
        them, told apart here in one loop) kept until its decision is read, or made whole with
        the one read; the round events in order."""
        halves = self.halves
        for event in inputs:
            if type(event) is not BetPlaced:
                self._input(event, timestamp_ms)
                continue
            key = (event.table_id, event.round_id, event.bet_id)
            read = halves.get(key)
            if read is None:
                halves[key] = event
            elif type(read) is tuple:  # its decision read first (redelivered, say)
                halves[key] = WHOLE
                self.whole.append(whole(event, *read))

    def _decisions(self, decisions: Sequence[Decision], timestamp_ms: int) -> None:
        """A journal's decisions, all committed at its Kafka timestamp: each bet's first made
        whole with its bet.placed or kept until that is read, and summed (`settled`,
        `refunded`); the adjustments kept."""
        halves = self.halves
        settled = self.settled.get(timestamp_ms)
        if settled is None:
            settled = self.settled[timestamp_ms] = {}
        refunded = self.refunded.get(timestamp_ms)
        if refunded is None:
            refunded = self.refunded[timestamp_ms] = {}
        for decision in decisions:
            sums: dict[Any, list[int]]
            if type(decision) is Settlement:
                sums = settled
                key: tuple[Any, ...] = (  # SettledKey (spelt out: read in place, no call)
                    decision.result,
                    decision.table_id,
                    decision.round_id,
                    decision.at,
                    decision.currency,
                    decision.game,
                    decision.kind,
                    decision.pick,
                )
                stake = decision.stake
                paid = decision.payout
            elif type(decision) is Refund:
                sums = refunded
                key = (  # RefundedKey
                    decision.reason,
                    decision.table_id,
                    decision.round_id,
                    decision.at,
                    decision.currency,
                )
                stake = decision.amount
                paid = 0
            else:
                assert isinstance(decision, Adjustment)
                self._adjustment(decision)
                continue
            bet = (decision.table_id, decision.round_id, decision.bet_id)
            read = halves.get(bet)
            if read is None:
                halves[bet] = (decision, timestamp_ms)
            elif type(read) is BetPlaced:
                halves[bet] = WHOLE
                self.whole.append(whole(read, decision, timestamp_ms))
            else:  # this bet's decision again
                continue
            summed = sums.get(key)
            if summed is None:
                sums[key] = [1, stake, paid]
            else:
                summed[0] += 1
                summed[1] += stake
                summed[2] += paid

    def _adjustment(self, adjustment: Adjustment) -> None:
        if adjustment.adjustment_id not in self.adjustments:
            self.adjustments[adjustment.adjustment_id] = adjusted(adjustment)
            labels = _labels(kind="adjustment", outcome=adjustment.cause)
            self.counts[("croupier_read_decisions_total", labels)] += 1

    def totals(self) -> Counter[CounterKey]:
        """Every counter this batch adds: `counts`, and the decisions' by outcome and latency."""
        counts = Counter(self.counts)
        for (outcome, settled, waited, *_), (n, _, _) in self.decided.items():
            kind = "settlement" if settled else "refund"
            counts[_decision_key(kind, outcome)] += n
            counts[_BUCKETS[bisect_left(LATENCY_BUCKETS_MS, waited)]] += n
            counts[_LATENCY_SUM] += waited * n
            counts[_LATENCY_COUNT] += n
        return counts


def _waited(timestamp_ms: int, at: str) -> int:
    """Milliseconds from a decision's `at` to its commit at `timestamp_ms` (0 if the clocks
    say it was committed first)."""
    return max(0, timestamp_ms - micros_of(at) // 1000)


def _add(sums: dict[Decided, list[int]], key: Decided, more: list[int]) -> None:
    summed = sums.get(key)
    if summed is None:
        sums[key] = list(more)
    else:
        for n, value in enumerate(more):
            summed[n] += value


def _decision_key(kind: str, outcome: str) -> CounterKey:
    """The decisions counter of a settlement's result or a refund's reason."""
    key = _DECISION_KEYS.get((kind, outcome))
    if key is None:
        key = _DECISION_KEYS[(kind, outcome)] = (
            "croupier_read_decisions_total",
            _labels(kind=kind, outcome=outcome),
        )
    return key


_DECISION_KEYS: dict[tuple[str, str], CounterKey] = {}


def _label(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _labels(**labels: str) -> str:
    key = tuple(labels.items())
    found = _LABELS.get(key)
    if found is None:
        found = _LABELS[key] = "{" + ",".join(f'{k}="{_label(v)}"' for k, v in key) + "}"
    return found


_LABELS: dict[tuple[tuple[str, str], ...], str] = {}
_EVENTS: Final = {
    source: ("croupier_read_events_total", _labels(topic=source)) for source in SOURCES
}
_UNREADABLE: Final = {
    source: ("croupier_read_unreadable_total", _labels(topic=source)) for source in SOURCES
}
_BUCKETS: Final = tuple(
    (f"{LATENCY}_bucket", str(bound)) for bound in (*LATENCY_BUCKETS_MS, "+Inf")
)
_LATENCY_SUM: Final = (f"{LATENCY}_sum", "")
_LATENCY_COUNT: Final = (f"{LATENCY}_count", "")
_MICROS: dict[str, int] = {}
_STAMPS: dict[datetime, tuple[tuple[int, str], Any]] = {}
_SECONDS: dict[tuple[int, Any], tuple[str, str]] = {}


def micros_of(text: str) -> int:
    """`parse_micros` of a timestamp text, remembered: every bet of a round shares its deciding
    event's `at`, and most of a table's bets share few distinct `at`s."""
    found = _MICROS.get(text)
    if found is None:
        if len(_MICROS) >= 4096:
            _MICROS.clear()
        found = _MICROS[text] = parse_micros(text)
    return found


def _stamp(instant: datetime) -> tuple[int, str]:
    """A bet's `at` as sortable microseconds and as RFC 3339 text (`datetime.isoformat`, with `Z`
    for +00:00), remembered like micros_of; and the text up to the second by second and zone, as
    bets placed apart share their second (formatting a datetime costs more than the rest). One
    instant in two zones is two equal datetimes and two texts: the zone remembered with it tells
    them apart."""
    found = _STAMPS.get(instant)
    if found is not None and found[1] == instant.tzinfo:
        return found[0]
    zone = instant.tzinfo
    if len(_STAMPS) >= 4096:
        _STAMPS.clear()
    sort_micros = micros(instant)
    second, fraction = divmod(sort_micros, 1_000_000)
    head = _SECONDS.get((second, zone))
    if head is None:
        if len(_SECONDS) >= 4096:
            _SECONDS.clear()
        text = instant.replace(microsecond=0).isoformat()
        head = _SECONDS[(second, zone)] = (text[:19], text[19:].replace("+00:00", "Z"))
    start, suffix = head
    placed_at = f"{start}.{fraction:06d}{suffix}" if fraction else start + suffix
    stamp = (sort_micros, placed_at)
    _STAMPS[instant] = (stamp, zone)
    return stamp


def json_text(value: Any) -> str | None:
    """A pick or an outcome as the JSON text the database keeps (None stays NULL)."""
    return None if value is None else _ENCODE(value).decode()


def placement(bet: BetPlaced) -> BetRow:
    """A bet's row as its bet.placed says (BET_COLUMNS); the decision's columns are left to the
    decision."""
    sort_micros, placed_at = _stamp(bet.at)
    return (
        bet.bet_id,
        bet.player_id,
        bet.table_id,
        bet.round_id,
        sort_micros,
        bet.seq,
        bet.kind,
        _pick(bet.pick),
        bet.stake,
        bet.currency,
        placed_at,
        "pending",
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
    )


def whole(bet: BetPlaced, decision: Settlement | Refund, timestamp_ms: int) -> BetRow:
    """The row of a bet read whole: the PLACED columns as its bet.placed says, the others as its
    committed decision (read at `timestamp_ms`) says. A settlement's row is spelt out here, as
    `_row` does for any decision: most bets are read whole and settled, and a call less a bet
    shows in the projector's time."""
    sort_micros, placed_at = _stamp(bet.at)
    if type(decision) is not Settlement:
        pick = _pick(bet.pick)
        return _row(decision, timestamp_ms, sort_micros, bet.seq, bet.kind, pick, bet.stake,
                    bet.currency, placed_at)  # fmt: skip
    dice = decision.dice
    discs = decision.discs
    return (
        decision.bet_id,
        decision.player_id,
        decision.table_id,
        decision.round_id,
        sort_micros,
        bet.seq,
        bet.kind,
        _PICKED(bet.pick) or _pick(bet.pick),
        bet.stake,
        bet.currency,
        placed_at,
        "settled",
        decision.game,
        decision.result,
        decision.payout,
        None,
        decision.at,
        decision.settlement_id,
        None if dice is None else _PICKED(dice) or _pick(dice),
        None if discs is None else _PICKED(discs) or _pick(discs),
        timestamp_ms,
    )


def decided(decision: Settlement | Refund, timestamp_ms: int) -> BetRow:
    """A bet's row as its committed decision alone says (what its bet.placed, read in another
    batch, does not overwrite): the PLACED columns the decision tells, sorted at its `at`."""
    at = micros_of(decision.at)
    if type(decision) is Settlement:
        pick = _pick(decision.pick)
        return _row(
            decision,
            timestamp_ms,
            at,
            0,
            decision.kind,
            pick,
            decision.stake,
            decision.currency,
            None,
        )
    assert isinstance(decision, Refund)
    return _row(decision, timestamp_ms, at, 0, None, None, decision.amount, decision.currency, None)


def _row(
    decision: Settlement | Refund,
    timestamp_ms: int,
    sort_micros: int,
    seq: int,
    kind: str | None,
    pick: str | None,
    stake: int,
    currency: str,
    placed_at: str | None,
) -> BetRow:
    """A decided bet's row (BET_COLUMNS), given its PLACED columns."""
    if type(decision) is Settlement:
        return (
            decision.bet_id,
            decision.player_id,
            decision.table_id,
            decision.round_id,
            sort_micros,
            seq,
            kind,
            pick,
            stake,
            currency,
            placed_at,
            "settled",
            decision.game,
            decision.result,
            decision.payout,
            None,
            decision.at,
            decision.settlement_id,
            _outcome(decision.dice),
            _outcome(decision.discs),
            timestamp_ms,
        )
    assert isinstance(decision, Refund)
    return (
        decision.bet_id,
        decision.player_id,
        decision.table_id,
        decision.round_id,
        sort_micros,
        seq,
        kind,
        pick,
        stake,
        currency,
        placed_at,
        "refunded",
        None,
        None,
        None,
        decision.reason,
        decision.at,
        decision.refund_id,
        None,
        None,
        timestamp_ms,
    )


_PICKS: dict[tuple[Any, ...], str] = {}
_PICKED: Final = _PICKS.get
"""A pick's text if rendered already (a tuple's; else None, and `_pick` renders it)."""


def _pick(pick: Any) -> str:
    """A pick as JSON text; the few distinct picks rendered once."""
    key = pick if type(pick) is tuple else tuple(pick)
    found = _PICKS.get(key)
    if found is None:
        if len(_PICKS) >= 4096:
            _PICKS.clear()
        found = _PICKS[key] = _ENCODE(list(pick)).decode()
    return found


def _outcome(value: Any) -> str | None:
    return None if value is None else _pick(value)


def adjusted(adjustment: Adjustment) -> Row:
    """An adjustment's row, as committed."""
    return {
        "adjustment_id": adjustment.adjustment_id,
        "bet_id": adjustment.bet_id,
        "player_id": adjustment.player_id,
        "table_id": adjustment.table_id,
        "round_id": adjustment.round_id,
        "currency": adjustment.currency,
        "n": adjustment.n,
        "cause": adjustment.cause,
        "result": adjustment.result,
        "previous_payout": adjustment.previous_payout,
        "payout": adjustment.payout,
        "delta": adjustment.delta,
        "dice": json_text(adjustment.dice and list(adjustment.dice)),
        "discs": json_text(adjustment.discs and list(adjustment.discs)),
        "reason": adjustment.reason,
        "authorized_by": adjustment.authorized_by,
        "at": adjustment.at,
    }


BetKey = tuple[str, str, str]
"""A bet's table, round and id: its row's key (`bets`' primary key). The contract makes a bet id
unique across all tables; were a table ever to repeat another's, both bets are kept."""
BET_COLUMNS: Final = (
    "bet_id",
    "player_id",
    "table_id",
    "round_id",
    "sort_micros",
    "seq",
    "kind",
    "pick",
    "stake",
    "currency",
    "placed_at",
    "status",
    "game",
    "result",
    "payout",
    "refund_reason",
    "decided_at",
    "decision_id",
    "dice",
    "discs",
    "decided_ts",
)
"""The columns of a bet's row, in the order of the `bets` table."""
BetRow = tuple[Any, ...]
"""A bet's row: a value for each of BET_COLUMNS."""
PLACED: Final = ("sort_micros", "seq", "kind", "pick", "stake", "currency", "placed_at")
"""The columns a bet.placed sets on a row its decision created first."""
DECIDED: Final = (
    "status",
    "game",
    "result",
    "payout",
    "refund_reason",
    "decided_at",
    "decision_id",
    "dice",
    "discs",
    "decided_ts",
)
"""The columns a decision sets on a row its bet.placed created first."""
Decided = tuple[str, bool, int, str, str, str, str, str | None, str | None, tuple[int, ...] | None]
"""What a decision counts under: its outcome (a settlement's result or a refund's reason),
whether it is a settlement, the milliseconds it waited (`Changes._decision`), then its report
line: its table, round, `at` and currency, and a settlement's game, kind and pick."""
WHOLE: Final = True
"""In `Changes.halves`: both halves of the bet were read, and its row is in `Changes.whole`."""
Half = BetPlaced | tuple[Settlement | Refund, int] | bool
"""What `Changes.halves` keeps of a bet: see there."""
SettledKey = tuple[str, str, str, str, str, str, str, tuple[int, ...]]
"""What a settlement counts under in a batch, but for how long it waited: its result, its
report line (table, round, `at`, currency) and its wager (game, kind, pick)."""
RefundedKey = tuple[str, str, str, str, str]
"""What a refund counts under in a batch, but for how long it waited: its reason and its report
line (table, round, `at`, currency)."""
_ROW_PLAYER: Final = itemgetter(BET_COLUMNS.index("player_id"))
_FIRST: Final = itemgetter(0)
_KEY_ROUND: Final = itemgetter(0, 1)
"""A bet's table and round, of its key."""
