"""The consumer goes back to each task's next offsets by being given its whole assignment again
(after a batch read across a rebalance is dropped, after a task is built again): a task's
partitions at its positions and read, a partition without a task paused, a task whose partitions
were revoked left out; and a consumer that refuses has the tasks built again instead of stopping
the worker."""

from __future__ import annotations

from typing import Any

import pytest
from confluent_kafka import KafkaError, KafkaException, TopicPartition

from services.settings import Settings
from services.settlement import rebalance
from services.settlement.fold import Fold
from services.settlement.loop import Engine
from services.settlement.restore import Task
from services.settlement.store import Store

INPUTS = ("rounds", "bets")


class Consumer:
    """The parts of confluent-kafka's consumer that positioning uses."""

    def __init__(self, assigned: list[int], refusing: bool = False) -> None:
        self.assigned = [TopicPartition(t, p) for p in assigned for t in INPUTS]
        self.refusing = refusing
        self.given: list[tuple[str, int, int]] = []
        self.paused: set[tuple[str, int]] = set()

    def assignment(self) -> list[TopicPartition]:
        return self.assigned

    def assign(self, partitions: list[TopicPartition]) -> None:
        if self.refusing:
            raise KafkaException(KafkaError(KafkaError._STATE, "Erroneous state"))
        self.assigned = [TopicPartition(tp.topic, tp.partition) for tp in partitions]
        self.given = [(tp.topic, tp.partition, tp.offset) for tp in partitions]

    def pause(self, partitions: list[TopicPartition]) -> None:
        self.paused |= {(tp.topic, tp.partition) for tp in partitions}

    def resume(self, partitions: list[TopicPartition]) -> None:
        self.paused -= {(tp.topic, tp.partition) for tp in partitions}


def _task(p: int, rounds: int, bets: int) -> Task:
    return Task(
        partition=p,
        fold=Fold(),
        store=Store(),
        positions={"rounds": rounds, "bets": bets},
    )


def _engine(*tasks: Task) -> Engine:
    engine = Engine(Settings())
    assert engine.settings.inputs == INPUTS
    engine.tasks = {task.partition: task for task in tasks}
    return engine


def test_the_tasks_still_assigned_go_back_to_their_next_offsets_and_are_read() -> None:
    engine = _engine(_task(0, 5, 70), _task(1, 9, 120))
    consumer: Any = Consumer(assigned=[0, 1])
    consumer.paused = {("rounds", 1), ("bets", 1)}  # a task built again had been paused
    rebalance.reposition(engine, consumer)
    assert sorted(consumer.given) == [
        ("bets", 0, 70),
        ("bets", 1, 120),
        ("rounds", 0, 5),
        ("rounds", 1, 9),
    ]
    assert consumer.paused == set()
    assert sorted(engine.tasks) == [0, 1] and not engine.rebuild


def test_a_partition_without_a_task_stays_assigned_and_paused() -> None:
    engine = _engine(_task(1, 9, 120))
    consumer: Any = Consumer(assigned=[0, 1])
    rebalance.reposition(engine, consumer)
    invalid = TopicPartition("rounds", 0).offset
    assert sorted(consumer.given) == [
        ("bets", 0, invalid),
        ("bets", 1, 120),
        ("rounds", 0, invalid),
        ("rounds", 1, 9),
    ]
    assert consumer.paused == {("rounds", 0), ("bets", 0)}


def test_a_task_whose_partitions_were_revoked_is_left_for_the_next_assignment() -> None:
    engine = _engine(_task(0, 5, 70), _task(1, 9, 120))
    consumer: Any = Consumer(assigned=[1])
    rebalance.reposition(engine, consumer)
    assert sorted(consumer.given) == [("bets", 1, 120), ("rounds", 1, 9)]
    assert sorted(engine.tasks) == [0, 1] and not engine.rebuild


def test_nothing_assigned_leaves_the_consumer_alone() -> None:
    engine = _engine(_task(0, 5, 70))
    consumer: Any = Consumer(assigned=[], refusing=True)
    rebalance.reposition(engine, consumer)
    assert sorted(engine.tasks) == [0] and not engine.rebuild


def test_a_consumer_that_refuses_the_assignment_has_its_tasks_built_again() -> None:
    engine = _engine(_task(0, 5, 70), _task(1, 9, 120), _task(2, 1, 1))
    consumer: Any = Consumer(assigned=[0, 1], refusing=True)
    rebalance.reposition(engine, consumer)
    assert sorted(engine.tasks) == [2]
    assert engine.rebuild == {0, 1} and engine.rebuild_at > 0


def test_tasks_lost_with_the_session_are_dropped_and_their_heap_given_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    released: list[bool] = []
    monkeypatch.setattr("services.settlement.rebalance.heap.release", lambda: released.append(True))
    engine = _engine(_task(0, 5, 70), _task(1, 9, 120))
    engine.metrics.pending = {0: 3, 1: 4}
    rebalance.lost(engine, [TopicPartition(t, 1) for t in INPUTS])
    assert sorted(engine.tasks) == [0]
    assert engine.metrics.pending == {0: 3}
    assert released == [True]
    rebalance.lost(engine, [TopicPartition(t, 1) for t in INPUTS])  # nothing left to give back
    assert released == [True]
