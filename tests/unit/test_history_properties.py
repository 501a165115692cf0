"""Properties of the read side's projection: order of the topics and repeats do not matter."""

from __future__ import annotations

import random
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from schemas.codec import encode
from schemas.records import Record, Refund, Rejected, Settlement, TableStats
from services.history.models import bet_out, round_out
from services.history.projection import Projection, Source
from services.settlement.fold import Fold
from services.simulation.streams import Profile, generate

Message = tuple[Source, bytes, int]
TOPICS: dict[type[Record], Source] = {
    Settlement: "settlements",
    Refund: "refunds",
    Rejected: "rejected",
    TableStats: "table-stats",
}


def committed(seed: int) -> dict[Source, list[Message]]:
    """Each topic's messages, with Kafka timestamps, as a pipeline would have written them."""
    streams = generate(
        seed, tables=3, rounds=6, profile=Profile(bets_per_round=(0, 12), correct=0.0, void=0.0)
    )
    fold = Fold()
    topics: dict[Source, list[Message]] = {}
    for n, (kind, raw) in enumerate(streams.tagged()):
        source: Source = "rounds" if kind == "rounds" else "bets"
        topics.setdefault(source, []).append((source, raw, 1000 * n))
        for record in fold.feed(kind, raw):
            out = TOPICS[type(record)]
            topics.setdefault(out, []).append((out, encode(record), 1000 * n + 7))
        for table_id in sorted(fold.boards_changed):
            stats = fold.stats(table_id)
            assert stats is not None
            topics.setdefault("table-stats", []).append(("table-stats", encode(stats), 1000 * n))
        fold.boards_changed.clear()
    return topics


def shuffled(
    topics: dict[Source, list[Message]], rng: random.Random, repeats: float
) -> list[Message]:
    """Any merge of the topics that keeps each topic's order, some messages read again later."""
    queues = {source: list(messages) for source, messages in topics.items()}
    merged: list[Message] = []
    while any(queues.values()):
        source = rng.choice([s for s, q in queues.items() if q])
        message = queues[source].pop(0)
        merged.append(message)
        if rng.random() < repeats:
            merged.insert(rng.randint(len(merged), len(merged) + 5), message)
    return merged


def snapshot(messages: list[Message]) -> dict[str, Any]:
    p = Projection()
    for source, raw, timestamp in messages:
        p.feed(source, raw, timestamp)
    return {
        "bets": {
            bet_id: bet_out(bet, p.round(bet.table_id, bet.round_id)).model_dump()
            for bet_id, bet in p.bets.items()
        },
        "rounds": {key: round_out(p, rnd).model_dump() for key, rnd in p.rounds.items()},
        "histories": p.players,
        "boards": {t: encode(b) for t, b in p.boards.items()},
        "pending": p.pending,
        "decisions": p.tally.decisions,
        "latency": (p.tally.latency.counts, p.tally.latency.total_ms),
    }


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32), order=st.integers(0, 2**32), repeats=st.sampled_from([0.0, 0.3]))
def test_every_order_of_the_topics_and_every_repeat_gives_the_same_views(
    seed: int, order: int, repeats: float
) -> None:
    topics = committed(seed)
    in_order = [
        m for source in ("rounds", "bets", "settlements", "refunds") for m in topics.get(source, [])
    ]
    in_order += topics.get("table-stats", []) + topics.get("rejected", [])
    assert snapshot(shuffled(topics, random.Random(order), repeats)) == snapshot(in_order)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32))
def test_every_decided_bet_shows_its_committed_decision_and_no_bet_is_left_pending(
    seed: int,
) -> None:
    topics = committed(seed)
    p = Projection()
    for source, raw, timestamp in shuffled(topics, random.Random(seed), 0.0):
        p.feed(source, raw, timestamp)
    decisions = {m[1] for source in ("settlements", "refunds") for m in topics.get(source, [])}
    shown = {encode(bet.decision) for bet in p.bets.values() if bet.decision is not None}
    assert shown == decisions
    assert p.pending == 0 == sum(1 for bet in p.bets.values() if bet.status == "pending")
