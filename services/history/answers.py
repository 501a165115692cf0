"""The API's answers built from database rows (pure): a bet, a round's recall, its totals, a table.

Each is a Struct of `models.py`, the one definition of the answers and of their OpenAPI schemas,
built positionally (a recall of 10,000 bets must answer in milliseconds) and encoded by msgspec.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final, assert_never
from urllib.parse import quote

import msgspec

from services.history.models import (
    AdjustmentOut,
    BetOut,
    RoundOut,
    StatRoundOut,
    StepOut,
    TableOut,
    TotalsOut,
)
from services.history.schema import BetRow

_JSON: Final = msgspec.json.Decoder()
_STEP: Final = msgspec.json.Decoder(StepOut)
_BOARD: Final = msgspec.json.Decoder(dict[str, Any])
ADJUSTMENT_COLUMNS: Final = ("bet_id", *AdjustmentOut.__struct_fields__)
"""The columns of `adjustments` an adjustment's answer needs (its bet, then its fields, named as
the columns), in this order in every query."""


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


def adjustment(row: Sequence[Any]) -> AdjustmentOut:
    """An adjustment, from an `adjustments` row (ADJUSTMENT_COLUMNS)."""
    _, adjustment_id, n, cause, result, previous, payout, delta, dice, discs, reason, by, at = row
    return AdjustmentOut(
        adjustment_id, n, cause, result, previous, payout, delta, decoded(dice), decoded(discs),
        reason, by, at,
    )  # fmt: skip


def bet(
    row: BetRow,
    phase: str | None,
    game: str | None,
    dice: Any,
    discs: Any,
    adjustments: Sequence[AdjustmentOut] = (),
) -> BetOut:
    """A bet, from its row, its round's state and its adjustments in correction order."""
    settled = row.status == "settled"
    return BetOut(
        row.bet_id, row.player_id, row.table_id, row.round_id, row.game if settled else game,
        row.seq if row.placed_at is not None else None, row.kind, decoded(row.pick), row.stake,
        row.currency, row.placed_at, row.status, row.result, row.payout,  # type: ignore[arg-type]
        list(adjustments), adjustments[-1].payout if adjustments else row.payout,
        row.refund_reason, row.decided_at, row.decision_id,  # type: ignore[arg-type]
        phase or "unopened",  # type: ignore[arg-type]
        decoded(row.dice) if settled else dice, decoded(row.discs) if settled else discs,
    )  # fmt: skip


def step(text: str) -> StepOut:
    """An accepted round event of a timeline (every field, null where absent)."""
    return _STEP.decode(text)


def totals(bets: Sequence[BetOut]) -> list[TotalsOut]:
    """A round's money per currency, in currency order; ggr = stakes - payouts over settled
    bets, each paying its net payout (adjustments included)."""
    sums: dict[str, list[int]] = {}
    for b in bets:
        row = sums.setdefault(b.currency, [0] * 8)
        row[0] += 1
        match b.status:
            case "settled":
                row[1] += 1
                row[4] += b.stake
                row[5] += b.net_payout or 0
            case "refunded":
                row[2] += 1
                row[6] += b.stake
            case "pending":
                row[3] += 1
                row[7] += b.stake
            case other:
                assert_never(other)
    return [
        TotalsOut(
            currency,
            n,
            settled,
            refunded,
            pending,
            stakes,
            payouts,
            stakes - payouts,
            refunds,
            pending_stakes,
        )
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
    adjusted: dict[str, list[AdjustmentOut]] | None = None,
) -> RoundOut:
    """A round's recall: its row (table, round, game, phase, suspensions, reshakes,
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
    return RoundOut(
        table_id, round_id, game, phase, suspensions > 0, reshakes, last_seq, dice, discs, cancel,
        [step(text) for text in steps], bets, totals(bets),
    )  # fmt: skip


def table(table_id: str, game: str | None, stats: str | None) -> TableOut:
    """A table: its game, its last result and its pages' links."""
    last = None
    if stats is not None:
        rounds = _BOARD.decode(stats).get("rounds") or []
        last = msgspec.convert(rounds[0], StatRoundOut) if rounds else None
    path = quote(table_id, safe="")
    return TableOut(table_id, game, last, f"/tables/{path}", f"/tables/{path}/stats")
