"""The worker's loop folds the next batches while a transaction commits, and sends them together
in the next one (at most `AHEAD`); it counts where its time goes (croupier_loop_seconds_total):
folding, handing a transaction to the producer, and waiting for the last one's commit."""

from __future__ import annotations

import time
from typing import Any

from confluent_kafka import Message

from services.settings import Settings
from services.settlement import group
from services.settlement.fold import Fold
from services.settlement.loop import AHEAD, Engine
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
        self.due = 0.0

    def send(self, messages: list[Any], offsets: list[Any], group_metadata: bytes) -> None:
        self.sent.append(len(messages))
        self.due = time.monotonic() + COMMIT_S

    def committing(self) -> bool:
        return time.monotonic() < self.due

    def committed_at(self) -> float:
        return self.due

    def settle(self) -> dict[tuple[str, int], int]:
        time.sleep(max(0.0, self.due - time.monotonic()))
        return {}


def messages(s: Settings, first_round: int) -> list[Message]:
    streams = generate(3, tables=1, rounds=1, first_round=first_round)
    return [
        Message(topic=topic, partition=0, offset=n, value=raw, timestamp=(1, 1_000))
        for topic, raws in ((s.topic_rounds, streams.rounds), (s.topic_bets, streams.bets))
        for n, raw in enumerate(raws, start=first_round * 1_000)
    ]


def _engine(s: Settings) -> tuple[Engine, SlowCommits]:
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
    return worker, commits


def test_a_batch_read_while_nothing_commits_is_sent_at_once_and_waits_for_nothing() -> None:
    worker, commits = _engine(Settings(durable_state=False))
    spent = worker.metrics.loop_seconds
    worker._process(messages(worker.settings, 0))
    assert len(commits.sent) == 1 and commits.sent[0] > 1
    assert worker.unsent is None
    assert spent["fold"] > 0 and spent["produce"] > 0
    assert spent["wait"] < COMMIT_S / 2


def test_batches_read_while_a_transaction_commits_go_together_in_the_next() -> None:
    worker, commits = _engine(Settings(durable_state=False))
    spent = worker.metrics.loop_seconds
    worker._process(messages(worker.settings, 0))
    for n in range(1, AHEAD):
        worker._process(messages(worker.settings, n))
    assert len(commits.sent) == 1  # the first still commits: nothing waited for it
    assert spent["wait"] < COMMIT_S / 2
    assert worker.unsent is not None and worker.unsent.batches == AHEAD - 1
    worker._process(messages(worker.settings, AHEAD))  # the most folded ahead: now it waits
    assert spent["wait"] >= COMMIT_S - spent["fold"] - 0.01
    assert len(commits.sent) == 2 and worker.unsent is None
    alone = []
    for n in range(1, AHEAD + 1):
        each, sent = _engine(Settings(durable_state=False))
        each._process(messages(worker.settings, n))
        alone.append(sent.sent[0])
    assert commits.sent[1] == sum(alone)  # the same messages, in one transaction


def test_settling_sends_what_was_folded_while_the_last_transaction_committed() -> None:
    worker, commits = _engine(Settings(durable_state=True))
    worker._process(messages(worker.settings, 0))
    worker._process(messages(worker.settings, 1))
    assert len(commits.sent) == 1
    worker.settle()
    assert len(commits.sent) == 2 and worker.unsent is None
    assert not worker.tasks[0].store.writing  # each batch's state changes counted committed


def test_a_task_built_again_drops_what_it_folded_before_unsent() -> None:
    worker, commits = _engine(Settings(durable_state=False))
    worker._process(messages(worker.settings, 0))
    worker._process(messages(worker.settings, 1))
    worker.drop([0])  # its transaction failed: built again from what was committed
    worker.settle()
    assert len(commits.sent) == 1 and worker.unsent is None
