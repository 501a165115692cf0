"""The simulated floor holds the rule sheets' situations, and croupier decides every bet of it."""

from __future__ import annotations

from collections import Counter, defaultdict
from functools import cache

import msgspec

from schemas.events import AnyEvent, BetPlaced, BettingClosed, RoundOpened
from schemas.records import Adjustment, Refund, Rejected, Settlement
from services import games
from services.settlement.fold import Fold
from services.simulation.simulator import Config, Emission, Simulation, Situations

DECODE = msgspec.json.Decoder(AnyEvent).decode


@cache
def floor() -> tuple[Simulation, tuple[Emission, ...]]:
    sim = Simulation(Config(tables=6, players=90, rounds=60, seed=2026))
    return sim, tuple(sim)


def events() -> list[AnyEvent]:
    """The events as first sent (a producer retry repeats one of them)."""
    return [DECODE(e.message.value) for e in floor()[1] if not e.retry]


def test_all_three_games_are_dealt() -> None:
    games_seen = Counter(e.game for e in events() if isinstance(e, RoundOpened))
    assert set(games_seen) == {"sicbo", "thai-hilo", "xocdia"}
    assert sum(games_seen.values()) == 6 * 60


def test_every_situation_of_the_rule_sheets_happens() -> None:
    types = Counter(type(e).__name__ for e in events())
    assert 0 < types["RoundResumed"] < types["RoundSuspended"]  # some end in a cancel
    assert types["RoundReshaken"] > 0
    assert types["RoundCancelled"] > 0
    assert 0 < types["RoundCorrected"] < types["RoundResult"] / 20
    sim = floor()[0]
    assert sim.counts["late_bets"] > 0
    assert sim.disconnects
    retried = [e for e in floor()[1] if e.retry]
    assert retried
    sent = {e.message.value for e in floor()[1] if not e.retry}
    assert all(e.message.value in sent for e in retried)


def test_bets_are_wagers_of_their_table_game_with_integer_stakes() -> None:
    game_of: dict[str, str] = {}
    for e in events():
        if isinstance(e, RoundOpened):
            game_of[e.round_id] = e.game
        elif isinstance(e, BetPlaced):
            assert games.wager(game_of[e.round_id], e.kind, e.pick) is not None
            assert isinstance(e.stake, int) and e.stake > 0
    kinds = Counter(e.kind for e in events() if isinstance(e, BetPlaced))
    assert len(kinds) > 15


def test_bets_are_placed_in_the_betting_window_except_the_late_ones() -> None:
    opened: dict[str, str] = {}
    closed: dict[str, BettingClosed] = {}
    for e in events():
        if isinstance(e, RoundOpened):
            opened[e.round_id] = e.at
        elif isinstance(e, BettingClosed):
            closed[e.round_id] = e
    late = 0
    for e in events():
        if isinstance(e, BetPlaced):
            at = e.at.isoformat().replace("+00:00", "Z")
            assert at >= opened[e.round_id][:19]
            close = closed.get(e.round_id)
            if close is not None and e.seq > close.last_seq:
                late += 1
                assert at >= close.at[:19]
    assert late == floor()[0].counts["late_bets"]


def test_croupier_decides_every_simulated_bet_once_and_rejects_nothing() -> None:
    fold = Fold()
    records = [r for e in floor()[1] for r in fold.feed(e.message.topic, e.message.value)]
    assert not [r for r in records if isinstance(r, Rejected)]
    assert fold.pending == 0
    bets = {e.bet_id for e in events() if isinstance(e, BetPlaced)}
    decided = Counter(r.bet_id for r in records if isinstance(r, Settlement | Refund))
    assert set(decided) == bets
    assert max(decided.values()) == 1
    reasons = Counter(r.reason for r in records if isinstance(r, Refund))
    assert set(reasons) == {"round_cancelled", "late_bet"}
    assert 0 < reasons["late_bet"] <= floor()[0].counts["late_bets"]  # or its round was cancelled
    adjusted = {r.bet_id for r in records if isinstance(r, Adjustment)}
    assert adjusted and adjusted <= {r.bet_id for r in records if isinstance(r, Settlement)}


def test_a_player_who_disconnects_sends_nothing_more_but_their_bets_settle() -> None:
    sim, emitted = floor()
    by_round: dict[tuple[str, str], list[BetPlaced]] = defaultdict(list)
    rounds_of_table: dict[str, list[str]] = defaultdict(list)
    for e in events():
        if isinstance(e, BetPlaced) and e.bet_id not in {
            b.bet_id for b in by_round[(e.round_id, e.player_id)]
        }:
            by_round[(e.round_id, e.player_id)].append(e)
        elif isinstance(e, RoundOpened):
            rounds_of_table[e.table_id].append(e.round_id)
    fold = Fold()
    decided = {
        r.bet_id
        for x in emitted
        for r in fold.feed(x.message.topic, x.message.value)
        if isinstance(r, Settlement | Refund)
    }
    assert sim.disconnects
    for gone in sim.disconnects:
        placed = by_round[(gone.round_id, gone.player_id)]
        assert len(placed) == gone.bets
        assert all(b.bet_id in decided for b in placed)
        table = gone.round_id.split("-")[0] + "-" + gone.round_id.split("-")[1]
        rounds = rounds_of_table[table]
        after = rounds[
            rounds.index(gone.round_id) + 1 : rounds.index(gone.round_id) + 1 + gone.away
        ]
        assert not any(by_round[(r, gone.player_id)] for r in after)


def test_supervisors_correct_and_void_a_configurable_share_of_rounds() -> None:
    often = Situations(correct=0.2, void=0.1)
    sim = Simulation(Config(tables=3, players=30, rounds=40, seed=7, situations=often))
    sent = list(sim)
    types = Counter(type(DECODE(e.message.value)).__name__ for e in sent if not e.retry)
    assert 10 <= types["RoundCorrected"] <= 40 and 3 <= types["RoundVoided"] <= 25
    fold = Fold()
    records = [r for e in sent for r in fold.feed(e.message.topic, e.message.value)]
    assert not [r for r in records if isinstance(r, Rejected)]
    assert {r.cause for r in records if isinstance(r, Adjustment)} == {"correction", "void"}
