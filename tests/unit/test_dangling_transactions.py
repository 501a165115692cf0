"""After each registration of its transactional id, a worker aborts its producer's transactions
that the brokers left open on a partition (their markers skipped), and only those: none of its
own can be open then, and other producers' are not its business."""

from __future__ import annotations

import time
from types import SimpleNamespace
from typing import Any

import pytest
from kafka import TopicPartition  # type: ignore[import-untyped]
from kafka.errors import (  # type: ignore[import-untyped]
    ClusterAuthorizationFailedError,
    NodeNotReadyError,
)

from services.settings import Settings
from services.settlement import dangling, fencing
from services.settlement.loop import Engine

ID = "croupier-settlement-worker-0"


def producer(pid: int, epoch: int, start: int, coordinator_epoch: int = 3) -> Any:
    return SimpleNamespace(
        producer_id=pid,
        producer_epoch=epoch,
        last_sequence=10,
        last_timestamp=0,
        coordinator_epoch=coordinator_epoch,
        current_transaction_start_offset=start,
    )


class Admin:
    """A broker's answers: our producer 7 now at epoch 5; who is active where."""

    def __init__(self, active: dict[TopicPartition, list[Any]]) -> None:
        self.active = active
        self.aborted: list[Any] = []

    def describe_transactions(self, ids: list[str]) -> dict[str, Any]:
        return {ID: SimpleNamespace(producer_id=7, producer_epoch=5)}

    def describe_topics(self, topics: list[str]) -> list[dict[str, Any]]:
        counts = {"settlements": 2, "state": 1, "__consumer_offsets": 2}
        return [
            {"name": t, "partitions": [{"partition_index": p} for p in range(counts.get(t, 0))]}
            for t in topics
        ]

    def describe_producers(self, partitions: list[TopicPartition]) -> dict[TopicPartition, Any]:
        return {tp: SimpleNamespace(active_producers=self.active.get(tp, [])) for tp in partitions}

    def abort_transaction(self, spec: Any) -> None:
        self.aborted.append(spec)


def test_an_open_transaction_of_an_older_epoch_of_its_producer_is_aborted_there() -> None:
    left = TopicPartition("settlements", 1)
    offsets = TopicPartition("__consumer_offsets", 0)
    admin = Admin({left: [producer(7, 3, 2624)], offsets: [producer(7, 3, 88, 4)]})
    found = dangling.abort(admin, ID, ["settlements", "state"])
    assert [(d.partition, d.start) for d in found] == [(offsets, 88), (left, 2624)]
    assert [(a.topic_partition, a.producer_id, a.producer_epoch) for a in admin.aborted] == [
        (offsets, 7, 3),
        (left, 7, 3),
    ]
    assert [a.coordinator_epoch for a in admin.aborted] == [4, 3]


def test_other_producers_and_closed_transactions_are_left_alone() -> None:
    admin = Admin(
        {
            TopicPartition("settlements", 0): [producer(8, 1, 500), producer(7, 3, -1)],
            TopicPartition("state", 0): [producer(7, 5, 40)],  # the current epoch: not before it
        }
    )
    assert dangling.abort(admin, ID, ["settlements", "state"]) == []
    assert admin.aborted == []


def _engine(monkeypatch: pytest.MonkeyPatch, answers: list[BaseException | int]) -> Engine:
    engine = Engine(Settings())
    engine.transactions = SimpleNamespace(start=lambda: None)  # type: ignore[assignment]
    calls = iter(answers)

    def close(settings: Settings, transactional_id: str, topics: Any) -> int:
        answer = next(calls)
        if isinstance(answer, BaseException):
            raise answer
        return answer

    monkeypatch.setattr(dangling, "close_dangling", close)
    monkeypatch.setattr(time, "sleep", lambda seconds: None)
    return engine


def test_registration_looks_again_while_the_brokers_do_not_answer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    engine = _engine(monkeypatch, [NodeNotReadyError("down"), OSError("refused"), 2])
    fencing.register(engine)
    assert engine.dangling_unchecked is False


def test_a_principal_not_allowed_to_look_is_told_once_and_the_worker_goes_on(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    engine = _engine(monkeypatch, [ClusterAuthorizationFailedError("no Alter")])
    fencing.register(engine)
    assert engine.dangling_unchecked is True
    fencing.register(engine)  # not asked again
    assert sum("kafka-transactions.sh find-hanging" in r.message for r in caplog.records) == 1
