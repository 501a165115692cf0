"""Input for the faults: generated tables, 10,000-bet rounds, and a flood of bad messages."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import msgspec

from services.simulation.streams import CLEAN, Profile, generate, interleave

BIG = 10_000
OVERSIZED = 900 * 1024
Tagged = list[tuple[str, bytes]]


def tables(seed: int, tables: int, rounds: int, first_round: int = 0) -> Tagged:
    """Tables with every contract case (cancelled, late, invalid, repeats...), both topics mixed."""
    streams = generate(
        seed,
        tables=tables,
        rounds=rounds,
        profile=Profile(bets_per_round=(0, 25)),
        first_round=first_round,
    )
    return interleave(streams, random.Random(seed))


def big_round(seed: int, table_id: str) -> tuple[Tagged, Tagged]:
    """A round of 10,000 bets on its own table: (opening, bets and betting close; the result)."""
    profile = Profile(**{**CLEAN.__dict__, "bets_per_round": (BIG, BIG)})
    streams = generate(seed, tables=1, rounds=1, profile=profile)
    name = table_id.encode()
    rounds = [raw.replace(b"T000", name) for raw in streams.rounds]
    bets = [raw.replace(b"T000", name) for raw in streams.bets]
    assert len(bets) == BIG and b"round.result" in rounds[-1]
    head = [("rounds", rounds[0]), *(("bets", raw) for raw in bets)]
    head += [("rounds", raw) for raw in rounds[1:-1]]
    return head, [("rounds", rounds[-1])]


def _templates(seed: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    streams = generate(
        seed, tables=3, rounds=2, profile=Profile(**{**CLEAN.__dict__, "bets_per_round": (2, 4)})
    )
    decode = msgspec.json.decode
    rounds = [decode(raw.replace(b'"T0', b'"X0')) for raw in streams.rounds]
    bets = [decode(raw.replace(b'"T0', b'"X0')) for raw in streams.bets]
    return rounds, bets


def _mutations() -> list[tuple[str, Callable[[dict[str, Any]], None]]]:
    """Ways to spoil an event so that the contract rejects it, and the topic they apply to."""
    return [
        ("bets", lambda e: e.update(stake="ten")),
        ("bets", lambda e: e.update(stake=0)),
        ("bets", lambda e: e.update(seq=-1)),
        ("bets", lambda e: e.update(pick="1,2")),
        ("bets", lambda e: e.update(currency="euro")),
        ("bets", lambda e: e.update(at="yesterday")),
        ("bets", lambda e: e.update(v=2)),
        ("bets", lambda e: e.update(v="1")),
        ("bets", lambda e: e.pop("bet_id")),
        ("bets", lambda e: e.update(type="bet.cancelled")),
        ("rounds", lambda e: e.update(v=3)),
        ("rounds", lambda e: e.update(type="round.exploded")),
        ("rounds", lambda e: e.update(table_id=5)),
        ("rounds", lambda e: e.update(at=12)),
        ("rounds", lambda e: e.pop("event_id")),
        ("bets", lambda e: e.update(player_id=e["player_id"] + "\x00")),  # U+0000, as \u0000
        ("rounds", lambda e: e.update(event_id="\x00" + e["event_id"])),
    ]


def bad_flood(seed: int, count: int, oversized: int) -> Tagged:
    """`count` bad messages (not JSON, wrong types, unknown versions and types) and `oversized`
    ~900 KB ones (binary junk, control characters, bytes that are not UTF-8, a huge field, a huge
    array of quoted strings), in a random order."""
    rng = random.Random(seed)
    rounds, bets = _templates(seed)
    mutations = _mutations()
    junk = [
        b"not json at all",
        b'{"type": "bet.placed", "v": 1, "event_id": ',
        b"[1, 2, 3]",
        b"null",
        b"\xff\xfe\x00garbage",
        b"",
    ]
    out: Tagged = []
    for n in range(count):
        if n % 4 == 0:
            out.append((rng.choice(("rounds", "bets")), rng.choice(junk)))
            continue
        topic, spoil = rng.choice(mutations)
        event = dict(rng.choice(bets if topic == "bets" else rounds))
        event["event_id"] = f"bad-{n}"
        spoil(event)
        out.append((topic, msgspec.json.encode(event)))
    for n in range(oversized):
        topic = ("rounds", "bets")[n % 2]
        match n % 5:
            case 0:
                raw = rng.randbytes(OVERSIZED)
            case 1:
                raw = b"\x01" * OVERSIZED  # JSON escapes each byte as \u0001: 6 times longer
            case 2:
                raw = b"\xff" * OVERSIZED  # not UTF-8: kept as \xff escapes, 5 times longer
            case 3:
                event = dict(rng.choice(bets))
                event.update(event_id=f"huge-{n}", player_id="p" * OVERSIZED)
                raw = msgspec.json.encode(event)
            case _:
                raw = msgspec.json.encode(['"quoted"\\'] * (OVERSIZED // 16))
        out.append((topic, raw))
    rng.shuffle(out)
    return out


def mix(rng: random.Random, *parts: Tagged) -> Tagged:
    """Merge parts at random, each keeping its own order."""
    queues = [list(reversed(p)) for p in parts if p]
    merged: Tagged = []
    while queues:
        weights = [len(q) for q in queues]
        q = rng.choices(queues, weights)[0]
        merged.append(q.pop())
        if not q:
            queues.remove(q)
    return merged
