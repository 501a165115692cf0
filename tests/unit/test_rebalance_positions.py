"""After a batch read across a rebalance is dropped, the consumer goes back to each task's next
offsets: only for tasks whose partitions are still assigned, and a partition that cannot be
positioned has its task built again instead of stopping the worker."""

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

    def __init__(self, assigned: list[int], refusing: frozenset[int] = frozenset()) -> None:
        self.assigned = [TopicPartition(t, p) for p in assigned for t in INPUTS]
        self.refusing = refusing
        self.seeks: list[tuple[str, int, int]] = []

    def assignment(self) -> list[TopicPartition]:
        return self.assigned

    def seek(self, tp: TopicPartition) -> None:
        if tp.partition in self.refusing:
            raise KafkaException(KafkaError(KafkaError._STATE, "Erroneous state"))
        self.seeks.append((tp.topic, tp.partition, tp.offset))


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


def test_the_tasks_still_assigned_go_back_to_their_next_offsets() -> None:
    engine = _engine(_task(0, 5, 70), _task(1, 9, 120))
    consumer: Any = Consumer(assigned=[0, 1])
    rebalance.reposition(engine, consumer)
    assert sorted(consumer.seeks) == [
        ("bets", 0, 70),
        ("bets", 1, 120),
        ("rounds", 0, 5),
        ("rounds", 1, 9),
    ]
    assert sorted(engine.tasks) == [0, 1] and not engine.rebuild


def test_a_task_whose_partitions_were_revoked_is_left_for_the_next_assignment() -> None:
    engine = _engine(_task(0, 5, 70), _task(1, 9, 120))
    consumer: Any = Consumer(assigned=[1])
    rebalance.reposition(engine, consumer)
    assert sorted(consumer.seeks) == [("bets", 1, 120), ("rounds", 1, 9)]
    assert sorted(engine.tasks) == [0, 1] and not engine.rebuild


def test_a_partition_that_cannot_be_positioned_has_its_task_built_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("services.settlement.rebalance.time.sleep", lambda _: None)
    engine = _engine(_task(0, 5, 70), _task(1, 9, 120))
    consumer: Any = Consumer(assigned=[0, 1], refusing=frozenset({0}))
    rebalance.reposition(engine, consumer)
    assert sorted(engine.tasks) == [1]
    assert engine.rebuild == {0} and engine.rebuild_at > 0
    assert sorted(consumer.seeks) == [("bets", 1, 120), ("rounds", 1, 9)]


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
