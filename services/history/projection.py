"""The read side's projection: a batch of croupier's committed messages as database changes.

Pure: messages in, rows out; no broker, database, clock or I/O. It re-decides nothing. The round
events and bets come from the `accepted` topic, where the workers put, in the transaction of their
decisions, exactly the inputs the settlement fold accepted (never a refused event, never a
redelivery); what was decided comes only from the committed `settlements`, `refunds` and
`adjustments`. So each message is applied as it stands, and the projector's stored positions make
it apply once.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Final, Literal, assert_never

import msgspec

from schemas.codec import Invalid, decode_event
from schemas.events import BetPlaced, RoundEvent
from schemas.records import Adjustment, Refund, Rejected, Settlement, TableStats
from services.history.views import micros, parse_micros

Source = Literal["accepted", "settlements", "refunds", "adjustments", "table-stats", "rejected"]
SOURCES: Final[tuple[Source, ...]] = (
    "accepted",
    "settlements",
    "refunds",
    "adjustments",
    "table-stats",
    "rejected",
)

_SETTLEMENT: Final = msgspec.json.Decoder(Settlement)
_REFUND: Final = msgspec.json.Decoder(Refund)
_ADJUSTMENT: Final = msgspec.json.Decoder(Adjustment)
_STATS: Final = msgspec.json.Decoder(TableStats)
_REJECTED: Final = msgspec.json.Decoder(Rejected)
_ENCODE: Final = msgspec.json.encode
Row = dict[str, Any]
CounterKey = tuple[str, str]
"""A counter's metric name and its labels, rendered as in the Prometheus exposition."""


class Unreadable(ValueError):
    """A committed message the projector cannot decode (counted, logged and skipped)."""


@dataclass
class Changes:
    """What one batch changes: rows to write, round events to apply in order, counters to add."""

    placements: dict[str, Row] = field(default_factory=dict)
    decisions: dict[str, Row] = field(default_factory=dict)
    adjustments: dict[str, Row] = field(default_factory=dict)
    round_events: list[tuple[RoundEvent, int]] = field(default_factory=list)
    boards: dict[str, TableStats] = field(default_factory=dict)
    raw_boards: dict[str, bytes] = field(default_factory=dict)
    counts: Counter[CounterKey] = field(default_factory=Counter)
    unreadable: list[str] = field(default_factory=list)

    def feed(self, source: Source, raw: bytes, timestamp_ms: int = 0) -> None:
        """Add one message of a topic; `timestamp_ms` is its Kafka timestamp."""
        self.counts[("croupier_read_events_total", _labels(topic=source))] += 1
        try:
            self._feed(source, raw, timestamp_ms)
        except (msgspec.DecodeError, Unreadable) as error:
            self.counts[("croupier_read_unreadable_total", _labels(topic=source))] += 1
            self.unreadable.append(f"{source}: {error}")

    def _feed(self, source: Source, raw: bytes, timestamp_ms: int) -> None:
        match source:
            case "accepted":
                self._accepted(raw, timestamp_ms)
            case "settlements":
                self._decision(_SETTLEMENT.decode(raw), timestamp_ms)
            case "refunds":
                self._decision(_REFUND.decode(raw), timestamp_ms)
            case "adjustments":
                adjustment = _ADJUSTMENT.decode(raw)
                if adjustment.adjustment_id not in self.adjustments:
                    self.adjustments[adjustment.adjustment_id] = adjusted(adjustment)
                    labels = _labels(kind="adjustment", outcome=adjustment.cause)
                    self.counts[("croupier_read_decisions_total", labels)] += 1
            case "table-stats":
                stats = _STATS.decode(raw)
                self.boards[stats.table_id] = stats
                self.raw_boards[stats.table_id] = raw
            case "rejected":
                reason = _REJECTED.decode(raw).reason
                self.counts[("croupier_read_rejections_total", _labels(reason=reason))] += 1
            case _:
                assert_never(source)

    def _accepted(self, raw: bytes, timestamp_ms: int) -> None:
        _, event = decode_event(raw)
        match event:
            case Invalid(reason=reason, detail=detail):
                raise Unreadable(f"{reason}: {detail}")
            case BetPlaced():
                self.placements.setdefault(event.bet_id, placement(event))
            case _:
                self.round_events.append((event, timestamp_ms))

    def _decision(self, decision: Settlement | Refund, timestamp_ms: int) -> None:
        if decision.bet_id in self.decisions:
            return
        self.decisions[decision.bet_id] = decided(decision, timestamp_ms)
        match decision:
            case Settlement(result=result):
                labels = _labels(kind="settlement", outcome=result)
            case Refund(reason=reason):
                labels = _labels(kind="refund", outcome=reason)
        self.counts[("croupier_read_decisions_total", labels)] += 1


def _label(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _labels(**labels: str) -> str:
    key = tuple(labels.items())
    found = _LABELS.get(key)
    if found is None:
        found = _LABELS[key] = "{" + ",".join(f'{k}="{_label(v)}"' for k, v in key) + "}"
    return found


_LABELS: dict[tuple[tuple[str, str], ...], str] = {}


def json_text(value: Any) -> str | None:
    """A pick or an outcome as the JSON text the database keeps (None stays NULL)."""
    return None if value is None else _ENCODE(value).decode()


def placement(bet: BetPlaced) -> Row:
    """A bet's row as its bet.placed says; the decision's columns are left to the decision."""
    return {
        "bet_id": bet.bet_id,
        "player_id": bet.player_id,
        "table_id": bet.table_id,
        "round_id": bet.round_id,
        "sort_micros": micros(bet.at),
        "seq": bet.seq,
        "kind": bet.kind,
        "pick": json_text(list(bet.pick)),
        "stake": bet.stake,
        "currency": bet.currency,
        "placed_at": bet.at.isoformat().replace("+00:00", "Z"),
        "status": "pending",
    }


def decided(decision: Settlement | Refund, timestamp_ms: int) -> Row:
    """A bet's row as its committed decision says (what a bet read later does not overwrite)."""
    row: Row = {
        "bet_id": decision.bet_id,
        "player_id": decision.player_id,
        "table_id": decision.table_id,
        "round_id": decision.round_id,
        "sort_micros": parse_micros(decision.at),
        "seq": 0,
        "currency": decision.currency,
        "decided_at": decision.at,
        "decided_ts": timestamp_ms,
    }
    match decision:
        case Settlement():
            row |= {
                "kind": decision.kind,
                "pick": json_text(list(decision.pick)),
                "stake": decision.stake,
                "status": "settled",
                "game": decision.game,
                "result": decision.result,
                "payout": decision.payout,
                "refund_reason": None,
                "decision_id": decision.settlement_id,
                "dice": json_text(decision.dice and list(decision.dice)),
                "discs": json_text(decision.discs and list(decision.discs)),
            }
        case Refund():
            row |= {
                "kind": None,
                "pick": None,
                "stake": decision.amount,
                "status": "refunded",
                "game": None,
                "result": None,
                "payout": None,
                "refund_reason": decision.reason,
                "decision_id": decision.refund_id,
                "dice": None,
                "discs": None,
            }
    return row


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
