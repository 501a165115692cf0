"""Simulated players: who sits where, how much they stake and what they like to bet on."""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from services import games

CURRENCIES: Final = (("EUR", 60), ("USD", 25), ("THB", 15))
UNITS: Final = ((100, 30), (200, 20), (500, 25), (1000, 15), (2500, 7), (10_000, 3))
"""A player's chip value in minor units, with how common it is."""
CHIPS: Final = ((1, 40), (2, 25), (3, 10), (5, 15), (10, 8), (25, 2))
"""How many chips a stake is."""

FAVOURITES: Final[Mapping[str, Mapping[str, int]]] = {
    "sicbo": {"small": 20, "big": 20, "odd": 8, "even": 8, "single": 10, "total": 8, "double": 4},
    "thai-hilo": {"hi": 22, "lo": 22, "hilo_11": 6, "single": 10, "lo_n": 4, "hi_n": 4},
    "xocdia": {"big": 20, "small": 20, "odd": 15, "even": 15, "reds": 6, "four_same": 4},
}
"""Weights of the popular kinds; every other kind of the game weighs 1 (the even-money bets
dominate real tables, the long shots are rare)."""


@dataclass(frozen=True, kw_only=True)
class Player:
    """A player: where the stakes come from (currency, chip value) and how often they bet."""

    player_id: str
    currency: str
    unit: int
    activity: float


@dataclass(frozen=True, kw_only=True)
class Bet:
    """What a player chose: a wager of the table's game and a stake in minor units."""

    kind: str
    pick: tuple[int, ...]
    stake: int


def _weighted(rng: random.Random, choices: tuple[tuple[int, int], ...]) -> int:
    values, weights = zip(*choices, strict=True)
    picked: int = rng.choices(values, weights=weights)[0]
    return picked


def players(rng: random.Random, count: int, first: int = 0) -> list[Player]:
    """`count` players numbered from `first`."""
    made = []
    for n in range(first, first + count):
        currency = rng.choices([c for c, _ in CURRENCIES], weights=[w for _, w in CURRENCIES])[0]
        made.append(
            Player(
                player_id=f"P{n:05d}",
                currency=currency,
                unit=_weighted(rng, UNITS),
                activity=rng.uniform(0.3, 0.95),
            )
        )
    return made


class Taste:
    """How players choose among a game's wagers (from `services.games.wagers`)."""

    def __init__(self, game: str) -> None:
        self.game = game
        by_kind: dict[str, list[tuple[int, ...]]] = {}
        for wager in games.wagers(game):
            by_kind.setdefault(wager.kind, []).append(wager.pick)
        self.kinds = list(by_kind)
        self.picks = by_kind
        favourites = FAVOURITES.get(game, {})
        self.weights = [favourites.get(kind, 1) for kind in self.kinds]

    def choose(self, rng: random.Random, player: Player) -> Bet:
        """A wager the game has, its pick in any order the table accepts, and a stake."""
        kind = rng.choices(self.kinds, weights=self.weights)[0]
        pick = rng.choice(self.picks[kind])
        if len(pick) > 1:
            shuffled = list(pick)
            rng.shuffle(shuffled)
            if games.wager(self.game, kind, shuffled) is not None:
                pick = tuple(shuffled)
        return Bet(kind=kind, pick=pick, stake=player.unit * _weighted(rng, CHIPS))
