"""A bet's row and an adjustment's row as the messages say them (pure).

A bet's row (`schema.BetRow`) is built from its bet.placed (`placed_row`), its committed decision
alone (`decision_row`), or both (`joined_row`): most bets are read whole and settled, so that row
is spelt out in one call a bet. Times and picks are rendered through memos (`memo.Memo`): few
distinct seconds and picks make most of a batch's rows.
"""

from __future__ import annotations

from datetime import datetime, tzinfo
from typing import Any, Final, assert_never

import msgspec

from schemas.events import BetPlaced
from schemas.records import Adjustment, Refund, Settlement
from services.history.memo import Memo
from services.history.schema import BetRow
from services.history.views import micros, parse_micros

Row = dict[str, Any]
_ENCODE: Final = msgspec.json.encode


def _stamp(instant_in: tuple[datetime, tzinfo | None]) -> tuple[int, str]:
    """A bet's `at` as sortable microseconds and as RFC 3339 text (`datetime.isoformat`, with `Z`
    for +00:00), made from the instant as it stands: its UTC may be out of `datetime`'s range
    where it is not (0001-01-01T00:30+01:00)."""
    instant, _ = instant_in
    sort_micros = micros(instant)
    text = instant.isoformat()
    return sort_micros, text[:-6] + "Z" if text.endswith("+00:00") else text


_STAMPS: Final = Memo(_stamp)
"""Remembered by instant and zone (one instant in two zones is one number and two texts): the
bets of a table share few instants (the benchmark's 100,000 bets, 451)."""


def stamp(instant: datetime) -> tuple[int, str]:
    """A bet's `at` as sortable microseconds and as RFC 3339 text (`_stamp`), remembered."""
    key = (instant, instant.tzinfo)
    return _STAMPS.known(key) or _STAMPS(key)


micros_of: Final = Memo(parse_micros)
"""`parse_micros` of a timestamp text, remembered: every bet of a round shares its deciding
event's `at`."""


def _pick_text(pick: tuple[Any, ...]) -> str:
    return _ENCODE(list(pick)).decode()


pick_text: Final = Memo(_pick_text)
"""A pick (or dice, discs) as the JSON text the database keeps: few distinct, each rendered once."""


def json_text(value: Any) -> str | None:
    """A pick or an outcome as the JSON text the database keeps (None stays NULL)."""
    return None if value is None else _ENCODE(value).decode()


def _outcome(value: tuple[Any, ...] | None) -> str | None:
    return None if value is None else pick_text(value)


def placed_row(bet: BetPlaced) -> BetRow:
    """A bet's row as its bet.placed says; the decision's columns are left to the decision."""
    sort_micros, placed_at = stamp(bet.at)
    pick = pick_text(bet.pick)
    return BetRow(bet.bet_id, bet.player_id, bet.table_id, bet.round_id, sort_micros, bet.seq,
                  bet.kind, pick, bet.stake, bet.currency, placed_at, "pending")  # fmt: skip


def joined_row(bet: BetPlaced, decision: Settlement | Refund, timestamp_ms: int) -> BetRow:
    """The row of a bet read whole: the PLACED columns as its bet.placed says, the others as its
    committed decision (read at `timestamp_ms`) says."""
    sort_micros, placed_at = stamp(bet.at)
    known = pick_text.known
    pick = known(bet.pick) or pick_text(bet.pick)
    match decision:
        case Settlement(dice=dice, discs=discs):
            return BetRow(
                decision.bet_id, decision.player_id, decision.table_id, decision.round_id,
                sort_micros, bet.seq, bet.kind, pick, bet.stake, bet.currency, placed_at,
                "settled", decision.game, decision.result, decision.payout, None, decision.at,
                decision.settlement_id,
                None if dice is None else known(dice) or pick_text(dice),
                None if discs is None else known(discs) or pick_text(discs),
                timestamp_ms,
            )  # fmt: skip
        case Refund():
            return _refunded(decision, timestamp_ms, sort_micros, bet.seq, bet.kind, pick,
                             bet.stake, bet.currency, placed_at)  # fmt: skip
        case other:
            assert_never(other)


def decision_row(decision: Settlement | Refund, timestamp_ms: int) -> BetRow:
    """A bet's row as its committed decision alone says (what its bet.placed, read in another
    batch, does not overwrite): the PLACED columns the decision tells, sorted at its `at`."""
    at = micros_of(decision.at)
    match decision:
        case Settlement():
            return BetRow(
                decision.bet_id, decision.player_id, decision.table_id, decision.round_id, at,
                0, decision.kind, pick_text(decision.pick), decision.stake, decision.currency,
                None, "settled", decision.game, decision.result, decision.payout, None,
                decision.at, decision.settlement_id, _outcome(decision.dice),
                _outcome(decision.discs), timestamp_ms,
            )  # fmt: skip
        case Refund():
            return _refunded(decision, timestamp_ms, at, 0, None, None, decision.amount,
                             decision.currency, None)  # fmt: skip
        case other:
            assert_never(other)


def _refunded(
    decision: Refund,
    timestamp_ms: int,
    sort_micros: int,
    seq: int,
    kind: str | None,
    pick: str | None,
    stake: int,
    currency: str,
    placed_at: str | None,
) -> BetRow:
    """A refunded bet's row, given its PLACED columns."""
    return BetRow(
        decision.bet_id, decision.player_id, decision.table_id, decision.round_id, sort_micros,
        seq, kind, pick, stake, currency, placed_at, "refunded", None, None, None,
        decision.reason, decision.at, decision.refund_id, None, None, timestamp_ms,
    )  # fmt: skip


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
