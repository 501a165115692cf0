"""A bet's row as the projection makes it: read whole (both halves in one batch) it is exactly the
row its bet.placed makes with the decision's columns set as the decision alone makes them, for
settlements and refunds of either order and of any outcome (properties)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import msgspec
from hypothesis import given
from hypothesis import strategies as st

from schemas.events import BetPlaced
from schemas.journal import records
from schemas.records import Refund, Settlement
from services.history.projection import Changes
from services.history.rows import decision_row, joined_row, placed_row
from services.history.schema import DECIDED, BetRow

IDS = st.text(alphabet="ABC-0123", min_size=1, max_size=6)
INSTANTS = st.builds(
    lambda micros, minutes: (
        datetime(2026, 11, 1, tzinfo=UTC).astimezone(timezone(timedelta(minutes=minutes)))
        + timedelta(microseconds=micros)
    ),
    st.integers(0, 10**12),
    st.sampled_from([0, 60, -330]),
)
PICKS = st.lists(st.integers(1, 6), max_size=3).map(tuple)


@st.composite
def bets(draw: st.DrawFn) -> BetPlaced:
    return BetPlaced(
        v=1,
        event_id=draw(IDS),
        table_id=draw(IDS),
        round_id=draw(IDS),
        at=draw(INSTANTS),
        bet_id=draw(IDS),
        player_id=draw(IDS),
        seq=draw(st.integers(1, 10_000)),
        kind=draw(st.sampled_from(["big", "small", "triple", "sum"])),
        pick=draw(PICKS),
        stake=draw(st.integers(1, 2**53 - 1)),
        currency=draw(st.sampled_from(["EUR", "THB"])),
    )


@st.composite
def decisions(draw: st.DrawFn, bet: BetPlaced) -> Settlement | Refund:
    at = draw(st.sampled_from(["2026-11-01T00:00:09Z", "2026-11-02T10:00:00.5+07:00"]))
    head = {"v": 1, "bet_id": bet.bet_id, "round_id": bet.round_id, "table_id": bet.table_id}
    head |= {"player_id": bet.player_id, "currency": bet.currency, "at": at}
    if draw(st.booleans()):
        return Refund(
            refund_id=f"refund:{bet.bet_id}",
            amount=bet.stake,
            reason=draw(st.sampled_from(["round_cancelled", "late_bet", "invalid_bet"])),
            **head,
        )
    dice, discs = draw(st.sampled_from([((1, 2, 3), None), (None, ("red", "white", "red", "red"))]))
    return Settlement(
        settlement_id=f"settlement:{bet.bet_id}",
        game="sicbo" if dice else "xocdia",
        kind=bet.kind,
        pick=bet.pick,
        stake=bet.stake,
        result=draw(st.sampled_from(["win", "lose", "push"])),
        payout=draw(st.integers(0, 2**60)),
        dice=dice,
        discs=discs,
        **head,
    )


@st.composite
def halves(draw: st.DrawFn) -> tuple[BetPlaced, Settlement | Refund, int]:
    bet = draw(bets())
    return bet, draw(decisions(bet)), draw(st.integers(0, 2**45))


def by_columns(row: BetRow) -> dict[str, object]:
    return msgspec.structs.asdict(row)


@given(halves())
def test_a_whole_row_is_its_placements_row_with_its_decisions_columns(
    read: tuple[BetPlaced, Settlement | Refund, int],
) -> None:
    bet, decision, timestamp_ms = read
    expected = by_columns(placed_row(bet)) | {
        column: value
        for column, value in by_columns(decision_row(decision, timestamp_ms)).items()
        if column in DECIDED
    }
    assert by_columns(joined_row(bet, decision, timestamp_ms)) == expected


@given(halves(), st.booleans())
def test_a_batch_makes_one_row_of_a_bet_whichever_half_it_reads_first(
    read: tuple[BetPlaced, Settlement | Refund, int], placement_first: bool
) -> None:
    bet, decision, timestamp_ms = read
    placed = records([msgspec.json.encode(bet)], [])
    settled = records([], [msgspec.json.encode(decision)])
    changes = Changes()
    for journal in (*placed, *settled) if placement_first else (*settled, *placed):
        changes.feed("accepted", journal, timestamp_ms)
        changes.feed("accepted", journal, timestamp_ms)  # read again: nothing changes
    assert changes.pairs.joined == [joined_row(bet, decision, timestamp_ms)]
    assert changes.pairs.pending() == changes.pairs.parts() == []
    assert changes.bets_read == 2
    assert changes.players_named() == {bet.player_id}
    assert changes.rounds_named() == {(bet.table_id, bet.round_id)}
