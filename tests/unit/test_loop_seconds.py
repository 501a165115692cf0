"""The worker's loop counts where its time goes (croupier_loop_seconds_total): folding a batch,
handing its transaction to the producer, and waiting for the previous one's commit."""

from __future__ import annotations

import time
from typing import Any

from confluent_kafka import Message

from services.settings import Settings
from services.settlement import group
from services.settlement.fold import Fold
from services.settlement.loop import Engine
from services.settlement.misrouted import Homes
from services.settlement.restore import Task
from services.settlement.routing import Topics
from services.settlement.store import Store
from services.simulation.streams import generate

COMMIT_S = 0.2


class Member:
    def consumer_group_metadata(self) -> bytes:
        return group.MAGIC + b"\x04\x00\x00\x00g\x00rdkafka-1\x00\x01"


class SlowCommits:
    """A producer's transactions whose commit takes COMMIT_S once sent."""

    def __init__(self) -> None:
        self.sent: list[int] = []
        self.committed_at = 0.0

    def send(self, messages: list[Any], offsets: list[Any], group_metadata: bytes) -> None:
        self.sent.append(len(messages))
        self.committed_at = time.monotonic() + COMMIT_S

    def settle(self) -> dict[tuple[str, int], int]:
        time.sleep(max(0.0, self.committed_at - time.monotonic()))
        return {}


def messages(s: Settings, first_round: int) -> list[Message]:
    streams = generate(3, tables=1, rounds=1, first_round=first_round)
    return [
        Message(topic=topic, partition=0, offset=n, value=raw, timestamp=(1, 1_000))
        for topic, raws in ((s.topic_rounds, streams.rounds), (s.topic_bets, streams.bets))
        for n, raw in enumerate(raws, start=first_round * 1_000)
    ]


def test_a_batch_counts_its_fold_and_produce_and_the_next_its_wait_for_the_commit() -> None:
    s = Settings(durable_state=False)
    worker = Engine(s)
    worker.consumer = Member()  # type: ignore[assignment]
    commits = SlowCommits()
    worker.transactions = commits  # type: ignore[assignment]
    worker.generation = 4
    worker.topics = Topics.of(s, 1, 1)
    worker.homes = Homes(1)
    worker.tasks = {
        0: Task(
            partition=0,
            fold=Fold(journal=True),
            store=Store(),
            positions={"rounds": 0, "bets": 0},
        )
    }
    spent = worker.metrics.loop_seconds
    worker._process(messages(s, 0))
    assert len(commits.sent) == 1 and commits.sent[0] > 1
    assert spent["fold"] > 0 and spent["produce"] > 0
    assert spent["wait"] < COMMIT_S / 2  # nothing was in flight before the first batch
    worker._process(messages(s, 1))
    assert len(commits.sent) == 2
    assert spent["wait"] >= COMMIT_S - spent["fold"] - 0.01
