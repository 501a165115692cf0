"""A partition paused while its task could not be built is read again once a later assignment
builds the task: librdkafka keeps a partition paused through a rebalance that gives it back, so
the worker resumes it itself (without that, the task waited forever with its input unread)."""

from __future__ import annotations

import threading
import time
from types import SimpleNamespace
from typing import Any

import pytest
from confluent_kafka import Producer, TopicPartition

from services.security import clients
from services.settlement import group, rebalance, restore
from services.settlement.fold import Fold
from services.settlement.metrics import Metrics
from services.settlement.misrouted import Homes
from services.settlement.restore import Built, Task
from services.settlement.store import Store
from tests.kafka import create_topics, isolated_settings


def _engine(settings: Any) -> Any:
    return SimpleNamespace(
        settings=settings,
        tasks={},
        blocked={},
        rebuild=set(),
        rebuild_at=0.0,
        blocked_at=0.0,
        metrics=Metrics(),
        keys=None,
        homes=Homes(2),
        stopping=threading.Event(),
        settle=lambda: None,
    )


def test_a_task_built_after_its_partitions_were_paused_reads_its_input(
    kafka: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = isolated_settings(kafka, partitions=2)
    create_topics(settings)
    producer = Producer(clients.librdkafka(settings))
    for topic in settings.inputs:
        for p in range(2):
            for n in range(3):
                producer.produce(topic, f"{topic}-{p}-{n}".encode(), partition=p)
    producer.flush(30)

    def built(
        _settings: Any, _consumer: Any, partitions: list[int], _keys: Any, _homes: Any
    ) -> Built:
        ready = {
            p: Task(
                partition=p,
                fold=Fold(),
                store=Store(),
                positions={"rounds": 0, "bets": 0},
            )
            for p in partitions
        }
        return Built(ready=ready, blocked={})

    monkeypatch.setattr(restore, "build", built)
    engine = _engine(settings)
    rebalances: list[list[TopicPartition]] = []

    def on_assign(consumer: Any, partitions: list[TopicPartition]) -> None:
        rebalances.append(partitions)
        if len(rebalances) == 1:  # the tasks could not be built: their input waits, paused
            consumer.assign(partitions)
            consumer.pause(partitions)
        else:
            rebalance.assigned(engine, consumer, partitions)

    first = group.consumer(settings, lambda error: None)
    second = group.consumer(settings, lambda error: None)
    try:
        first.subscribe(list(settings.inputs), on_assign=on_assign)
        _poll(first, lambda: len(rebalances) == 1)
        second.subscribe(list(settings.inputs))  # a rebalance gives each one partition
        read: list[bytes] = []

        def both() -> bool:
            second.poll(0)
            return len(rebalances) >= 2 and len(read) == 6

        _poll(first, both, read)
        [mine] = engine.tasks
        assert sorted(read) == sorted(
            f"{topic}-{mine}-{n}".encode() for topic in settings.inputs for n in range(3)
        )
    finally:
        second.close()
        first.close()


def _poll(consumer: Any, done: Any, into: list[bytes] | None = None) -> None:
    deadline = time.monotonic() + 60
    while not done() and time.monotonic() < deadline:
        message = consumer.poll(0.2)
        if message is not None and message.error() is None and into is not None:
            into.append(message.value())
