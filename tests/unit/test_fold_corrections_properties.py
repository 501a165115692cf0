"""Properties of corrections and voids over generated streams (contract sections 3a and 6)."""

from __future__ import annotations

import random
from collections import Counter

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from schemas.codec import encode
from schemas.records import Adjustment, Settlement
from services import games
from services.games.model import payout
from services.settlement.fold import Fold
from services.simulation.streams import Profile, generate, interleave

SEEDS = st.integers(min_value=0, max_value=2**32)
CORRECTING = Profile(bets_per_round=(0, 10), correct=0.5, void=0.2)


def _records(messages: list[tuple[str, bytes]]) -> list[object]:
    fold = Fold()
    return [r for topic, raw in messages for r in fold.feed(topic, raw)]


@settings(max_examples=60)
@given(seed=SEEDS, mix=SEEDS)
def test_any_allowed_interleaving_gives_the_same_records_adjustments_included(
    seed: int, mix: int
) -> None:
    streams = generate(seed, tables=3, rounds=6, profile=CORRECTING)
    expected = Counter(encode(r) for r in _records(streams.tagged()))
    mixed = interleave(streams, random.Random(mix))
    assert Counter(encode(r) for r in _records(mixed)) == expected
    bets_first = [("bets", b) for b in streams.bets] + [("rounds", r) for r in streams.rounds]
    assert Counter(encode(r) for r in _records(bets_first)) == expected


def _final_outcomes(rounds: list[bytes]) -> dict[tuple[str, str], object]:
    """Each round's outcome after its last accepted correction, or "void", read off the input."""
    final: dict[tuple[str, str], object] = {}
    for raw in rounds:
        try:
            event = msgspec.json.decode(raw)
        except msgspec.DecodeError:
            continue
        if not isinstance(event, dict):
            continue
        key = (event.get("table_id"), event.get("round_id"))
        kind = event.get("type")
        if kind in ("round.result", "round.corrected") and final.get(key) != "void":
            final[key] = tuple(event.get("dice") or event.get("discs"))
        elif kind == "round.voided" and key in final:
            final[key] = "void"
    return final


@settings(max_examples=60)
@given(seed=SEEDS, mix=SEEDS)
def test_a_settled_bet_and_its_adjustments_pay_what_its_final_outcome_pays(
    seed: int, mix: int
) -> None:
    streams = generate(seed, tables=3, rounds=8, profile=CORRECTING)
    records = _records(interleave(streams, random.Random(mix)))
    final = _final_outcomes(streams.rounds)
    paid: dict[str, int] = {}
    settlements: dict[str, Settlement] = {}
    for record in records:
        if isinstance(record, Settlement):
            settlements[record.bet_id] = record
            paid[record.bet_id] = record.payout
        elif isinstance(record, Adjustment):
            assert record.delta != 0
            assert record.delta == record.payout - record.previous_payout
            assert record.previous_payout == paid[record.bet_id]
            paid[record.bet_id] = record.payout
    for bet_id, s in settlements.items():
        outcome = final[(s.table_id, s.round_id)]
        if outcome == "void":
            assert paid[bet_id] == s.stake
            continue
        wager = games.wager(s.game, s.kind, s.pick)
        assert wager is not None
        assert paid[bet_id] == payout(s.stake, games.verdict(wager, outcome))
