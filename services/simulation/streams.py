"""Deterministic generated streams of `rounds` and `bets` covering every case of the contract.

The generator is seeded, so the same seed gives the same bytes. It is test and demo data, not part
of the fold: randomness lives here, never in the settlement core.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Final

import msgspec

from services import games

GAMES: Final = ("sicbo", "thai-hilo", "xocdia")
BAD_LINES: Final = (
    b"not json at all",
    b'{"type": "round.opened", "v": 1, "event_id": ',
    b"[1, 2, 3]",
    b'{"type": "round.exploded", "v": 1}',
    b'{"type": "bet.placed", "v": 2, "event_id": "x"}',
)
_ENCODE: Final = msgspec.json.encode


@dataclass(frozen=True, kw_only=True)
class Profile:
    """How much of each situation a generated stream holds (probabilities per round or bet)."""

    bets_per_round: tuple[int, int] = (0, 8)
    cancel: float = 0.1
    suspend: float = 0.1
    reshake: float = 0.1
    late: float = 0.1
    invalid: float = 0.05
    redeliver: float = 0.05
    conflict: float = 0.02
    duplicate_seq: float = 0.02
    bad_input: float = 0.02
    abandoned: float = 0.0
    correct: float = 0.05
    void: float = 0.02


CLEAN: Final = Profile(
    cancel=0.0,
    suspend=0.0,
    reshake=0.0,
    late=0.0,
    invalid=0.0,
    redeliver=0.0,
    conflict=0.0,
    duplicate_seq=0.0,
    bad_input=0.0,
    correct=0.0,
    void=0.0,
)


@dataclass(kw_only=True)
class Streams:
    """The messages of `rounds` and of `bets`, each in the order the tables published them."""

    rounds: list[bytes] = field(default_factory=list)
    bets: list[bytes] = field(default_factory=list)

    def tagged(self) -> list[tuple[str, bytes]]:
        """Rounds then bets, each message with its topic (one allowed interleaving)."""
        return [("rounds", raw) for raw in self.rounds] + [("bets", raw) for raw in self.bets]


def interleave(streams: Streams, rng: random.Random) -> list[tuple[str, bytes]]:
    """A random merge of the two topics that keeps each topic's own order."""
    merged: list[tuple[str, bytes]] = []
    r = b = 0
    while r < len(streams.rounds) or b < len(streams.bets):
        take_round = b >= len(streams.bets) or (
            r < len(streams.rounds)
            and rng.random() < len(streams.rounds) / (len(streams.rounds) + len(streams.bets))
        )
        if take_round:
            merged.append(("rounds", streams.rounds[r]))
            r += 1
        else:
            merged.append(("bets", streams.bets[b]))
            b += 1
    return merged


class _Clock:
    def __init__(self, start: datetime) -> None:
        self.now = start

    def tick(self, seconds: float) -> str:
        self.now += timedelta(milliseconds=int(seconds * 1000))
        return self.now.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def generate(
    seed: int,
    *,
    tables: int = 3,
    rounds: int = 5,
    profile: Profile = Profile(),
    first_round: int = 0,
) -> Streams:
    """Streams for `tables` tables of `rounds` rounds each, all drawn from `seed`."""
    rng = random.Random(seed)
    out = Streams()
    for t in range(tables):
        table_id = f"T{t:03d}"
        game = GAMES[t % len(GAMES)]
        clock = _Clock(datetime(2026, 11, 29, 12, 0, tzinfo=UTC) + timedelta(hours=t))
        for n in range(first_round, first_round + rounds):
            _round(rng, out, profile, clock, table_id, game, f"{table_id}-R{n:07d}")
    return out


def _round(
    rng: random.Random,
    out: Streams,
    p: Profile,
    clock: _Clock,
    table_id: str,
    game: str,
    round_id: str,
) -> None:
    serial = iter(range(1_000_000))
    base = {"v": 1, "table_id": table_id, "round_id": round_id}

    def event(type_: str, /, **extra: Any) -> bytes:
        body = {"type": type_, "event_id": f"{round_id}-e{next(serial)}", **base}
        body["at"] = clock.tick(rng.uniform(0.1, 2.0))
        return _ENCODE({**body, **extra})

    def emit_round(raw: bytes) -> None:
        out.rounds.append(raw)
        if rng.random() < p.redeliver:
            out.rounds.append(raw)

    def bad() -> None:
        if rng.random() < p.bad_input:
            target = out.rounds if rng.random() < 0.5 else out.bets
            target.append(rng.choice(BAD_LINES))

    emit_round(event("round.opened", game=game))
    low, high = p.bets_per_round
    count = rng.randint(low, high)
    cancelled_early = rng.random() < p.cancel / 2
    for seq in range(1, count + 1):
        out.bets.extend(_bets(rng, p, event, game, round_id, seq))
        bad()
    if cancelled_early:
        emit_round(event("round.cancelled", reason="table closed by the supervisor"))
        return
    if rng.random() < p.suspend:
        emit_round(event("round.suspended", reason="dealer called the supervisor"))
        emit_round(event("round.resumed"))
    last_seq = count
    emit_round(event("round.betting_closed", last_seq=last_seq))
    if rng.random() < p.late:
        out.bets.extend(_bets(rng, p, event, game, round_id, last_seq + 1))
    if rng.random() < p.reshake:
        emit_round(event("round.reshaken", reason="dice not flat"))
    bad()
    if rng.random() < p.abandoned:
        return
    if rng.random() < p.cancel / 2:
        emit_round(event("round.cancelled", reason="result could not be read"))
        return
    outcome = _outcome(rng, game)
    emit_round(event("round.result", **outcome))
    while rng.random() < p.correct:  # a supervisor corrects the dealer's entry, once or more
        again = _outcome(rng, game)
        if again != outcome:
            outcome = again
            emit_round(
                event("round.corrected", **outcome, reason="dealer misread", authorized_by="sup-1")
            )
    if rng.random() < p.void:
        emit_round(event("round.voided", reason="fault seen on video", authorized_by="sup-2"))


def _outcome(rng: random.Random, game: str) -> dict[str, list[Any]]:
    if game == "xocdia":
        return {"discs": [rng.choice(("red", "white")) for _ in range(4)]}
    return {"dice": [rng.randint(1, 6) for _ in range(3)]}


def _bets(
    rng: random.Random, p: Profile, event: Any, game: str, round_id: str, seq: int
) -> list[bytes]:
    player = f"P{rng.randint(0, 49):04d}"
    bet_id = f"{round_id}-b{seq}"
    if rng.random() < p.invalid:
        kind, pick = rng.choice((("lucky_seven", []), ("single", [9]), ("reds", [7])))
    else:
        wager = rng.choice(games.wagers(game))
        kind, pick = wager.kind, list(wager.pick)
        rng.shuffle(pick) if kind != "double_and_single" else None
    stake = rng.choice((1, 5, 10, 25, 100, 250, 1000, 2500, 12345))
    fields = {
        "bet_id": bet_id,
        "player_id": player,
        "seq": seq,
        "kind": kind,
        "pick": pick,
        "stake": stake,
        "currency": "EUR",
    }
    placed = event("bet.placed", **fields)
    made = [placed]
    if rng.random() < p.redeliver:
        made.append(event("bet.placed", **fields))
    if rng.random() < p.conflict:
        made.append(event("bet.placed", **{**fields, "stake": stake + 1}))
    if rng.random() < p.duplicate_seq:
        made.append(event("bet.placed", **{**fields, "bet_id": bet_id + "x"}))
    return made
