"""A consumer that died of a fatal error (a static member fenced after its session expired while
the coordinator did not answer, librdkafka issue 3437) is replaced: the worker drops its tasks
and joins the group again with a new consumer, as a restarted worker would."""

from __future__ import annotations

from typing import Any

import pytest
from confluent_kafka import KafkaError, Message

from services.settings import Settings
from services.settlement import group, rebalance
from services.settlement.fold import Fold
from services.settlement.loop import Engine
from services.settlement.restore import Task
from services.settlement.routing import Topics
from services.settlement.store import Store

FENCED = KafkaError(
    KafkaError._FATAL,
    "Fatal error: Broker: Static consumer fenced by other consumer with same group.instance.id",
)


class Consumer:
    """The parts of confluent-kafka's consumer that joining the group uses."""

    def __init__(self) -> None:
        self.subscribed: list[str] = []
        self.closed = False

    def subscribe(self, topics: list[str], **callbacks: Any) -> None:
        assert set(callbacks) == {"on_assign", "on_revoke", "on_lost"}
        self.subscribed = topics

    def close(self) -> None:
        self.closed = True


def test_a_fatal_error_is_found_among_messages_and_errors_and_nothing_else_is() -> None:
    data = Message(topic="bets", partition=0, offset=1, value=b"{}")
    transport = Message(error=KafkaError(KafkaError._TRANSPORT, "broker down"))
    assert group.fenced([data, transport]) is None
    assert group.fenced([KafkaError(KafkaError._TRANSPORT, "broker down")]) is None
    found = group.fenced([data, Message(error=FENCED), transport])
    assert found is not None and found.code() == KafkaError._FATAL
    assert group.fenced([FENCED]) is FENCED


def test_a_fenced_consumer_is_closed_its_tasks_dropped_and_a_new_one_subscribed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    made: list[Consumer] = []

    def consumer(s: Settings, on_error: Any) -> Consumer:
        made.append(Consumer())
        return made[-1]

    monkeypatch.setattr(group, "consumer", consumer)
    monkeypatch.setattr(group, "topics", lambda c, s: Topics.of(s, 2, 4))
    worker = Engine(Settings(instance_id="w0"))
    old = Consumer()
    worker.consumer = old  # type: ignore[assignment]
    worker.generation = 7
    worker.blocked = {3: "lost state"}
    worker.tasks = {
        p: Task(
            partition=p,
            fold=Fold(),
            store=Store(),
            positions={"rounds": 0, "bets": 0},
        )
        for p in (0, 1)
    }
    new = rebalance.rejoin(worker, FENCED)
    assert old.closed
    assert new is made[0] and worker.consumer is new
    assert new.subscribed == list(worker.settings.inputs)
    assert worker.tasks == {} and worker.blocked == {} and worker.generation is None
    assert worker.homes.partitions == 4


def test_the_error_callback_keeps_a_fatal_error_for_the_loop() -> None:
    worker = Engine(Settings())
    worker._consumer_error(KafkaError(KafkaError._TRANSPORT, "broker down"))
    assert worker.fenced is None and not worker.stopping.is_set()
    worker._consumer_error(FENCED)
    assert worker.fenced is FENCED and not worker.stopping.is_set()
