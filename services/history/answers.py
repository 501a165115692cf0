"""The API's answers built from database rows (pure): a bet, a round's recall, its totals, a table.

The shapes are those of the pydantic models in `models.py` (the OpenAPI document); the answers are
plain dicts encoded by msgspec, since a recall of 10,000 bets must answer in milliseconds.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final
from urllib.parse import quote

import msgspec

from services.history.schema import BetRow

Answer = dict[str, Any]
_JSON: Final = msgspec.json.Decoder()
_STEP_FIELDS: Final = (
    "type",
    "event_id",
    "at",
    "game",
    "last_seq",
    "reason",
    "dice",
    "discs",
    "authorized_by",
    "previous_dice",
    "previous_discs",
)
ADJUSTMENT_COLUMNS: Final = (
    "bet_id",
    "adjustment_id",
    "n",
    "cause",
    "result",
    "previous_payout",
    "payout",
    "delta",
    "dice",
    "discs",
    "reason",
    "authorized_by",
    "at",
)
"""The columns of `adjustments` an adjustment's answer needs, in this order in every query."""
BET_COLUMNS: Final = BetRow.__struct_fields__
"""The columns of `bets` a bet's answer is read from (a `BetRow`), in this order in every query."""


_DECODED: dict[str, Any] = {}


def decoded(text: str | None) -> Any:
    """A pick or an outcome from its JSON text (the few distinct texts decoded once; the answer
    is encoded right after, never changed, so sharing the decoded lists is safe)."""
    if text is None:
        return None
    found = _DECODED.get(text)
    if found is None:
        found = _JSON.decode(text)
        if len(_DECODED) < 10_000:
            _DECODED[text] = found
    return found


def adjustment(row: Sequence[Any]) -> Answer:
    """An adjustment as `AdjustmentOut`, from an `adjustments` row (ADJUSTMENT_COLUMNS)."""
    _, adjustment_id, n, cause, result, previous, payout, delta, dice, discs, reason, by, at = row
    return {
        "adjustment_id": adjustment_id,
        "n": n,
        "cause": cause,
        "result": result,
        "previous_payout": previous,
        "payout": payout,
        "delta": delta,
        "dice": decoded(dice),
        "discs": decoded(discs),
        "reason": reason,
        "authorized_by": by,
        "at": at,
    }


def bet(
    row: BetRow,
    phase: str | None,
    game: str | None,
    dice: Any,
    discs: Any,
    adjustments: Sequence[Answer] = (),
) -> Answer:
    """A bet as `BetOut`, from its row, its round's state and its adjustments in correction
    order."""
    settled = row.status == "settled"
    return {
        "bet_id": row.bet_id,
        "player_id": row.player_id,
        "table_id": row.table_id,
        "round_id": row.round_id,
        "game": row.game if settled else game,
        "seq": row.seq if row.placed_at is not None else None,
        "kind": row.kind,
        "pick": decoded(row.pick),
        "stake": row.stake,
        "currency": row.currency,
        "placed_at": row.placed_at,
        "status": row.status,
        "result": row.result,
        "payout": row.payout,
        "adjustments": list(adjustments),
        "net_payout": adjustments[-1]["payout"] if adjustments else row.payout,
        "refund_reason": row.refund_reason,
        "decided_at": row.decided_at,
        "decision_id": row.decision_id,
        "round_status": phase or "unopened",
        "dice": decoded(row.dice) if settled else dice,
        "discs": decoded(row.discs) if settled else discs,
    }


def step(text: str) -> Answer:
    """An accepted round event of a timeline as `StepOut` (every field, null where absent)."""
    value = _JSON.decode(text)
    return {name: value.get(name) for name in _STEP_FIELDS}


def totals(bets: Sequence[Answer]) -> list[Answer]:
    """A round's money per currency, in currency order; ggr = stakes - payouts over settled
    bets, each paying its net payout (adjustments included)."""
    sums: dict[str, list[int]] = {}
    for b in bets:
        row = sums.setdefault(b["currency"], [0] * 8)
        row[0] += 1
        match b["status"]:
            case "settled":
                row[1] += 1
                row[4] += b["stake"]
                row[5] += b["net_payout"]
            case "refunded":
                row[2] += 1
                row[6] += b["stake"]
            case _:
                row[3] += 1
                row[7] += b["stake"]
    return [
        {
            "currency": currency,
            "bets": n,
            "settled": settled,
            "refunded": refunded,
            "pending": pending,
            "stakes": stakes,
            "payouts": payouts,
            "ggr": stakes - payouts,
            "refunds": refunds,
            "pending_stakes": pending_stakes,
        }
        for currency, (
            n,
            settled,
            refunded,
            pending,
            stakes,
            payouts,
            refunds,
            pending_stakes,
        ) in sorted(sums.items())
    ]


def recall(
    rnd: Sequence[Any],
    steps: Sequence[str],
    rows: Sequence[BetRow],
    adjusted: dict[str, list[Answer]] | None = None,
) -> Answer:
    """A round as `RoundOut`: its row (table, round, game, phase, suspensions, reshakes,
    last_seq, dice, discs, cancel_reason), its steps, its bets' rows in (seq, bet_id) order and
    their adjustments by bet; the bets placed first, then those only a decision tells."""
    table_id, round_id, game, phase, suspensions, reshakes, last_seq, dice, discs, cancel = rnd
    dice, discs = decoded(dice), decoded(discs)
    shown_dice = dice if phase != "cancelled" else None
    shown_discs = discs if phase != "cancelled" else None
    placed = [row for row in rows if row.placed_at is not None]
    unplaced = [row for row in rows if row.placed_at is None]
    found = adjusted or {}
    bets = [
        bet(row, phase, game, shown_dice, shown_discs, found.get(row.bet_id, ()))
        for row in placed + unplaced
    ]
    return {
        "table_id": table_id,
        "round_id": round_id,
        "game": game,
        "status": phase,
        "suspended": suspensions > 0,
        "reshakes": reshakes,
        "last_seq": last_seq,
        "dice": dice,
        "discs": discs,
        "cancel_reason": cancel,
        "timeline": [step(text) for text in steps],
        "bets": bets,
        "totals": totals(bets),
    }


def table(table_id: str, game: str | None, stats: str | None) -> Answer:
    """A table as `TableOut`: its game, its last result and its pages' links."""
    last = None
    if stats is not None:
        rounds = _JSON.decode(stats).get("rounds") or []
        last = rounds[0] if rounds else None
    path = quote(table_id, safe="")
    return {
        "table_id": table_id,
        "game": game,
        "last_result": last,
        "board": f"/tables/{path}",
        "stats": f"/tables/{path}/stats",
    }
