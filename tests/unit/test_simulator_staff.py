"""The simulated floor's dealers and shakers: a rota without a random draw, and loaded ones."""

from __future__ import annotations

from collections import defaultdict

import msgspec

from schemas.events import AnyEvent, RoundOpened
from services.simulation.simulator import SHIFT, Config, Simulation

DECODE = msgspec.json.Decoder(AnyEvent).decode


def openings(config: Config) -> list[RoundOpened]:
    events = [DECODE(e.message.value) for e in Simulation(config) if not e.retry]
    return [e for e in events if isinstance(e, RoundOpened)]


def test_every_round_names_a_dealer_and_a_shaker_of_the_floor_and_both_change_by_shift() -> None:
    config = Config(tables=4, players=0, rounds=200, seed=3)
    staff = config.staff()
    opened = openings(config)
    assert {e.dealer_id for e in opened} == set(staff["dealer"])
    assert {e.shaker_id for e in opened} == set(staff["shaker"])
    dealers = defaultdict(list)
    for e in opened:
        assert e.shaker_id is not None and e.shaker_id.startswith(f"{e.table_id}-S")
        if not dealers[e.table_id] or dealers[e.table_id][-1] != e.dealer_id:
            dealers[e.table_id].append(e.dealer_id)
    rounds_per_shift = SHIFT / 35.0
    for table, seen in dealers.items():
        assert len(seen) >= 200 / rounds_per_shift / 2, table


def test_a_loaded_floor_is_as_repeatable_as_a_fair_one() -> None:
    config = Config(tables=3, players=5, rounds=40, seed=8, loaded=frozenset({("dealer", "D02")}))
    first = [e.message.value for e in Simulation(config)]
    assert first == [e.message.value for e in Simulation(config)]
    fair = [e.message.value for e in Simulation(Config(tables=3, players=5, rounds=40, seed=8))]
    assert first != fair
