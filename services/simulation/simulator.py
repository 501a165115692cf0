"""A realistic live-dealer floor: tables of every game, players betting in the betting window,
and the rule sheets' situations (disconnects, suspensions, reshakes, cancels, late bets, producer
retries). Deterministic: the seed fixes every choice, and `at` comes from a simulated clock.

The events are built with the publisher's round builders, so only the contract's order can come
out; they are validated as they are made (`prepare`), and a retry repeats the very same bytes.
"""

from __future__ import annotations

import heapq
import itertools
import random
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final, Literal

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from schemas.events import AnyEvent, GameName
from services.publisher.message import Message, prepare
from services.publisher.table import RoundBuilder, Table
from services.signing.keys import derived_key
from services.simulation.clock import SimClock
from services.simulation.players import Bet, Player, Taste, players

GAMES: Final[tuple[GameName, ...]] = ("sicbo", "thai-hilo", "xocdia")
CODES: Final = {"sicbo": "SB", "thai-hilo": "HL", "xocdia": "XD"}
EPOCH: Final = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
WINDOW: Final = {"sicbo": 20.0, "thai-hilo": 20.0, "xocdia": 15.0}
"""Seconds of the betting period of each game."""
SHAKE: Final = 8.0
"""Seconds from betting closed to the result (shaking, revealing)."""
PAUSE: Final = 5.0
"""Seconds between a round's fate and the next round's opening."""
ROUND_SECONDS: Final = 35.0
"""About how long a round takes in simulated time (used to pace wall time)."""
SUSPEND_REASONS: Final = (
    "dealer called the supervisor",
    "video stream interrupted",
    "shaker jammed",
)
RESHAKE_REASONS: Final = {
    "sicbo": ("dice not flat", "dice overlapping", "fewer than three rolls"),
    "thai-hilo": ("dice not flat", "dice overlapping", "fewer than three rolls"),
    "xocdia": ("disc dropped", "disc standing on its edge"),
}
SHIFT: Final = 20 * 60.0
"""Simulated seconds a dealer stays at a table; then every table's dealer and shaker change."""
SHAKERS: Final = 2
"""Shakers (bowls, dice sets) of each table, used in turn, a shift each."""
LOADED_SIX: Final = 0.25
"""How often a loaded die shows 6 (a fair one: 1/6); its other faces share the rest."""
LOADED_RED: Final = 0.6
"""How often a loaded Xoc Dia disc falls red (a fair one: 1/2)."""
Scope = Literal["table", "dealer", "shaker"]
CANCEL_REASONS: Final = (
    "problem not solved: the supervisor voided the round",
    "result could not be read",
    "table closed by the supervisor",
)


@dataclass(frozen=True, kw_only=True)
class Situations:
    """How often each situation of the rule sheets happens (per round, per player or per event)."""

    suspend: float = 0.06
    reshake: float = 0.08
    cancel: float = 0.03
    late: float = 0.05
    disconnect: float = 0.02
    retry: float = 0.01
    correct: float = 0.02
    void: float = 0.005


@dataclass(frozen=True, kw_only=True)
class Config:
    """The floor: tables (games in turn), players spread over them, rounds per table (0 forever)."""

    tables: int = 6
    players: int = 60
    rounds: int = 0
    seed: int = 0
    start: datetime = EPOCH
    situations: Situations = field(default_factory=Situations)
    signed: bool = False
    """Every table signs its money-moving round events with `table_key(seed, table_id)`."""
    loaded: frozenset[tuple[Scope, str]] = frozenset()
    """The tables, dealers and shakers whose rounds fall unfairly (a die biased toward 6, discs
    toward red), for showing the outcome integrity tests' alarm: ("dealer", "D03"), ..."""

    def staff(self) -> dict[Scope, list[str]]:
        """The ids of the floor's tables, dealers and shakers."""
        tables = [table_id for table_id, _ in table_ids(self.tables)]
        return {
            "table": tables,
            "dealer": dealers(self.tables),
            "shaker": [f"{t}-S{k}" for t in tables for k in range(1, SHAKERS + 1)],
        }


@dataclass(frozen=True, kw_only=True)
class Emission:
    """One message to send, `offset` simulated seconds after the start."""

    offset: float
    message: Message
    retry: bool = False


@dataclass(frozen=True, kw_only=True)
class Disconnect:
    """A player who left mid-round after `bets` bets; none of theirs in the next `away` rounds."""

    round_id: str
    player_id: str
    bets: int
    away: int


def table_key(seed: int, table_id: str) -> Ed25519PrivateKey:
    """A simulated table's signing key, derived from the seed: the same streams every run."""
    return derived_key("simulation", str(seed), table_id)


def table_ids(count: int) -> list[tuple[str, GameName]]:
    """The tables of a floor: games in turn, numbered per game (SB-01, HL-01, XD-01, SB-02...)."""
    made = []
    for n in range(count):
        game = GAMES[n % len(GAMES)]
        made.append((f"{CODES[game]}-{n // len(GAMES) + 1:02d}", game))
    return made


def dealers(tables: int) -> list[str]:
    """The floor's dealers: one a table and, for the breaks, one more for every two tables."""
    return [f"D{n:02d}" for n in range(1, tables + (tables + 1) // 2 + 1)]


def on_duty(n: int, table_id: str, tables: int, offset: float) -> tuple[str, str]:
    """The dealer and the shaker of the `n`th table at a simulated time: every SHIFT the dealers
    move on one table (who was on a break takes the first), and the table takes its next shaker.
    Drawn from no random source, so the other events of a seed are those of before."""
    shift = int(offset // SHIFT)
    pool = dealers(tables)
    return pool[(n + shift) % len(pool)], f"{table_id}-S{shift % SHAKERS + 1}"


class Simulation:
    """The events of a floor, in simulated-time order across tables; `counts` tallies situations."""

    def __init__(self, config: Config) -> None:
        if config.tables < 1 or config.players < 0 or config.rounds < 0:
            raise ValueError("tables must be >= 1, players >= 0 and rounds >= 0")
        self.config = config
        self.counts: Counter[str] = Counter()
        self.disconnects: list[Disconnect] = []

    def __iter__(self) -> Iterator[Emission]:
        c = self.config
        seats = players(random.Random(f"{c.seed}/players"), c.players)
        scripts = []
        for n, (table_id, game) in enumerate(table_ids(c.tables)):
            seated = seats[n :: c.tables]
            rng = random.Random(f"{c.seed}/{table_id}")
            script = _TableScript(self, n, table_id, game, seated, rng)
            scripts.append(((e.offset, n, i, e) for i, e in enumerate(script.run())))
        for _, _, _, emission in heapq.merge(*scripts, key=lambda x: x[:3]):
            yield emission


class _TableScript:
    """One table's rounds, one after the other, as emissions in time order."""

    def __init__(
        self,
        sim: Simulation,
        n: int,
        table_id: str,
        game: GameName,
        seated: list[Player],
        rng: random.Random,
    ) -> None:
        self.sim = sim
        self.n = n
        self.loaded = False
        """Whether the current round falls unfairly (its table, dealer or shaker is loaded)."""
        self.s = sim.config.situations
        self.rng = rng
        self.game: GameName = game
        self.seated = seated
        self.taste = Taste(game)
        self.back: dict[str, int] = {}
        """The round number from which a disconnected player plays again."""
        self.number = 0
        self.clock = SimClock(sim.config.start)
        self.table = Table(
            table_id=table_id, game=game, clock=self.clock, prefix=f"{sim.config.seed:x}-"
        )
        c = sim.config
        self.signers = {table_id: table_key(c.seed, table_id)} if c.signed else None
        self.t = rng.uniform(0.0, ROUND_SECONDS)
        self.out: list[Emission] = []

    def run(self) -> Iterator[Emission]:
        rounds = itertools.count() if self.sim.config.rounds == 0 else range(self.sim.config.rounds)
        for _ in rounds:
            self._round(self.table.next_round())
            self.sim.counts["rounds"] += 1
            yield from self.out
            self.out = []

    def _emit(self, at: float, make: Callable[[], AnyEvent]) -> None:
        self.clock.set(at)
        event = make()
        message = prepare(event, self.signers)
        self.out.append(Emission(offset=at, message=message))
        self.sim.counts["round_events" if message.topic == "rounds" else "bets"] += 1
        if self.rng.random() < self.s.retry:
            self.sim.counts["retries"] += 1
            self.out.append(Emission(offset=at + 0.001, message=message, retry=True))

    def _round(self, rnd: RoundBuilder) -> None:
        rng, s = self.rng, self.s
        self.number += 1
        start = self.t
        c = self.sim.config
        dealer, shaker = on_duty(self.n, rnd.table_id, c.tables, start)
        self.loaded = bool(
            c.loaded & {("table", rnd.table_id), ("dealer", dealer), ("shaker", shaker)}
        )
        self._emit(start, lambda: rnd.open(dealer_id=dealer, shaker_id=shaker))
        window = WINDOW[self.game]
        bets = self._bets(rnd.round_id, start, window)
        timeline: list[tuple[float, int, Callable[[], AnyEvent]]] = []
        pause_at = pause = 0.0
        if rng.random() < s.suspend / 2:
            self.sim.counts["suspended"] += 1
            pause_at, pause = start + rng.uniform(0.3, 0.8) * window, rng.uniform(5.0, 30.0)
            reason = rng.choice(SUSPEND_REASONS)
            timeline.append((pause_at, 2, lambda: rnd.suspend(reason)))
            timeline.append((pause_at + pause, 0, rnd.resume))

        def later(at: float) -> float:
            """Betting is paused while the round is suspended: what was due then comes after."""
            return at + pause if pause and at >= pause_at else at

        for at, player, bet in bets:
            timeline.append((later(at), 1, self._bet(rnd, player, bet)))
        cancel_at = None
        if rng.random() < s.cancel / 2:
            cancel_at = later(start + rng.uniform(0.5, 1.0) * window)
            timeline.append((cancel_at, 3, lambda: self._cancelled(rnd)))
        timeline.sort(key=lambda step: (step[0], step[1]))
        for at, _, make in timeline:
            if rnd.final:
                break
            self._emit(at, make)
        if cancel_at is not None:
            self.t = cancel_at + PAUSE
            return
        closed = start + window + pause
        self._emit(closed, rnd.close)
        self._after_close(rnd, closed)

    def _after_close(self, rnd: RoundBuilder, closed: float) -> None:
        rng, s = self.rng, self.s
        if rng.random() < s.late:
            present = [p for p in self.seated if self.back.get(p.player_id, 0) <= self.number]
            player = rng.choice(present) if present else None
            if player is not None:
                self.sim.counts["late_bets"] += 1
                bet = self.taste.choose(rng, player)
                at = closed + rng.uniform(0.05, 1.5)
                self._emit(at, self._bet(rnd, player, bet, late=True))
        t = closed + 2.0
        if rng.random() < s.suspend / 2:
            self.sim.counts["suspended"] += 1
            self._emit(t, lambda: rnd.suspend(rng.choice(SUSPEND_REASONS)))
            t += rng.uniform(5.0, 40.0)
            if rng.random() < 0.3:
                self._cancel(rnd, t)
                return
            self._emit(t, rnd.resume)
        if rng.random() < s.cancel / 2:
            self._cancel(rnd, t + 1.0)
            return
        t += SHAKE
        if rng.random() < s.reshake:
            self.sim.counts["reshaken"] += 1
            self._emit(t, lambda: rnd.reshake(rng.choice(RESHAKE_REASONS[self.game])))
            t += SHAKE
        outcome = self._outcome()
        if self.game == "xocdia":
            self._emit(t, lambda: rnd.result(discs=outcome))
        else:
            self._emit(t, lambda: rnd.result(dice=outcome))
        self._afterwards(rnd, t + PAUSE / 2)
        self.t = t + PAUSE

    def _outcome(self) -> tuple[Any, ...]:
        rng = self.rng
        if self.loaded:
            if self.game == "xocdia":
                return tuple("red" if rng.random() < LOADED_RED else "white" for _ in range(4))
            return tuple(6 if rng.random() < LOADED_SIX else rng.randint(1, 5) for _ in range(3))
        if self.game == "xocdia":
            return tuple(rng.choice(("red", "white")) for _ in range(4))
        return (rng.randint(1, 6), rng.randint(1, 6), rng.randint(1, 6))

    def _afterwards(self, rnd: RoundBuilder, at: float) -> None:
        """Now and then a supervisor corrects the dealer's entry, or voids the round."""
        rng, s = self.rng, self.s
        if rng.random() < s.correct:
            outcome = self._outcome()
            while outcome == rnd.outcome:
                outcome = self._outcome()
            self.sim.counts["corrected"] += 1
            key = "discs" if self.game == "xocdia" else "dice"
            fix = {key: outcome}
            self._emit(
                at,
                lambda: rnd.correct(
                    reason="the dealer entered the wrong outcome",
                    authorized_by=f"supervisor-{rng.randint(1, 4)}",
                    **fix,
                ),
            )
        if rng.random() < s.void:
            self.sim.counts["voided"] += 1
            self._emit(
                at + 0.5,
                lambda: rnd.void(
                    reason="a fault of the shaker found on video",
                    authorized_by=f"supervisor-{rng.randint(1, 4)}",
                ),
            )

    def _cancel(self, rnd: RoundBuilder, at: float) -> None:
        self._emit(at, lambda: self._cancelled(rnd))
        self.t = at + PAUSE

    def _cancelled(self, rnd: RoundBuilder) -> AnyEvent:
        self.sim.counts["cancelled"] += 1
        return rnd.cancel(self.rng.choice(CANCEL_REASONS))

    def _bets(self, round_id: str, start: float, window: float) -> list[tuple[float, Player, Bet]]:
        """Who bets what and when in this round; disconnecting players stop betting mid-round."""
        rng, s = self.rng, self.s
        planned: list[tuple[float, int, Player, Bet]] = []
        for n, player in enumerate(self.seated):
            if self.back.get(player.player_id, 0) > self.number:
                continue
            if rng.random() >= player.activity:
                continue
            times = sorted(rng.uniform(0.5, window - 0.5) for _ in range(rng.choice((1, 1, 2, 3))))
            if rng.random() < s.disconnect:
                self.sim.counts["disconnects"] += 1
                gone = rng.uniform(0.5, window - 0.5)
                times = [t for t in times if t < gone]
                away = rng.randint(1, 5)
                self.back[player.player_id] = self.number + away + 1
                self.sim.disconnects.append(
                    Disconnect(
                        round_id=round_id, player_id=player.player_id, bets=len(times), away=away
                    )
                )
            planned.extend((start + t, n, player, self.taste.choose(rng, player)) for t in times)
        planned.sort(key=lambda p: (p[0], p[1]))
        return [(at, player, bet) for at, _, player, bet in planned]

    def _bet(
        self, rnd: RoundBuilder, player: Player, bet: Bet, late: bool = False
    ) -> Callable[[], AnyEvent]:
        place = rnd.late_bet if late else rnd.bet
        return lambda: place(
            player_id=player.player_id,
            kind=bet.kind,
            pick=bet.pick,
            stake=bet.stake,
            currency=player.currency,
        )
