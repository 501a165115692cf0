"""A worker sends a transaction only while its consumer is still of the group generation whose
assignment its tasks follow.

librdkafka moves its generation as soon as the group does (to -1 when the worker's session
expires), while the rebalance callbacks wait for the next `consume`; the group coordinator accepts
transactional offsets with generation -1 and no member id from anyone. A worker stuck in a commit
while its session expired must therefore not send the batch it folded meanwhile: another worker
may own its tasks by then (seen with the broker killed twice: 10,929 settlements paid twice).
"""

from __future__ import annotations

import struct
from typing import Any

import pytest
from confluent_kafka import Consumer

from services.settings import Settings
from services.settlement import group
from services.settlement.fold import Fold
from services.settlement.loop import Engine
from services.settlement.restore import Task
from services.settlement.store import Store
from services.settlement.transaction import Failed


def metadata(generation: int, member: str = "rdkafka-1") -> bytes:
    """Group metadata as librdkafka serialises it (group "g", no instance id)."""
    return group.MAGIC + struct.pack("=i", generation) + b"g\0" + member.encode() + b"\0\x01"


class Member:
    """The consumer parts the engine's sending uses: the group metadata, as librdkafka has it."""

    def __init__(self, generation: int) -> None:
        self.generation = generation

    def consumer_group_metadata(self) -> bytes:
        return metadata(self.generation, "" if self.generation < 0 else "rdkafka-1")


class Transactions:
    """Records what the engine sends instead of sending it."""

    def __init__(self) -> None:
        self.sent: list[tuple[int, list[int], bytes]] = []

    def send(self, messages: list[Any], offsets: list[Any], group_metadata: bytes) -> None:
        self.sent.append((len(messages), sorted({tp.partition for tp in offsets}), group_metadata))

    def commit(
        self, messages: list[Any], offsets: list[Any], group_metadata: bytes
    ) -> dict[tuple[str, int], int]:
        self.send(messages, offsets, group_metadata)
        return {}

    def settle(self) -> dict[tuple[str, int], int]:
        raise Failed("nothing is in flight in these tests")


def engine(assigned_in: int | None, now: int) -> tuple[Engine, Transactions]:
    built = Engine(Settings(durable_state=False))
    built.consumer = Member(now)  # type: ignore[assignment]
    sent = Transactions()
    built.transactions = sent  # type: ignore[assignment]
    built.generation = assigned_in
    built.tasks = {
        p: Task(
            partition=p,
            fold=Fold(),
            store=Store(),
            positions={"rounds": 10 * p, "bets": 100 * p},
        )
        for p in (0, 1)
    }
    return built, sent


def test_the_generation_is_read_from_the_metadata_librdkafka_gives() -> None:
    unjoined = Consumer({"group.id": "g", "bootstrap.servers": "127.0.0.1:9"})
    try:
        assert group.generation(unjoined.consumer_group_metadata()) == -1
    finally:
        unjoined.close()
    assert group.generation(metadata(7)) == 7
    assert group.generation(metadata(2**31 - 1)) == 2**31 - 1


def test_metadata_of_an_unknown_format_is_refused_rather_than_guessed() -> None:
    with pytest.raises(ValueError, match="unknown consumer group metadata format"):
        group.generation(b"CGMDv9:\x01\x00\x00\x00g\x00")


def test_a_member_of_the_assignments_generation_sends_its_batch_with_that_metadata() -> None:
    worker, transactions = engine(assigned_in=4, now=4)
    worker._send([("settlements", 0, None, b"{}", None)], [0, 1], 0.0, 0.0)
    assert transactions.sent == [(1, [0, 1], metadata(4))]
    assert sorted(worker.tasks) == [0, 1]
    assert worker.inflight is not None


def test_a_worker_whose_session_expired_sends_nothing_and_gives_its_tasks_up() -> None:
    worker, transactions = engine(assigned_in=4, now=-1)
    worker._send([("settlements", 0, None, b"{}", None)], [0, 1], 0.0, 0.0)
    assert transactions.sent == []
    assert worker.tasks == {}
    assert worker.rebuild == {0, 1}
    assert worker.inflight is None


def test_a_worker_the_group_moved_on_from_sends_nothing_either() -> None:
    worker, transactions = engine(assigned_in=4, now=5)
    worker._send([("settlements", 1, None, b"{}", None)], [1], 0.0, 0.0)
    assert transactions.sent == []
    assert sorted(worker.tasks) == [0]
    assert worker.rebuild == {1}


def test_between_a_revocation_and_the_next_assignment_nothing_is_sent() -> None:
    worker, transactions = engine(assigned_in=None, now=4)
    worker._send([("settlements", 0, None, b"{}", None)], [0], 0.0, 0.0)
    assert transactions.sent == []
    assert worker.rebuild == {0}


def test_a_state_transaction_of_a_worker_the_group_moved_on_from_is_not_sent() -> None:
    worker, transactions = engine(assigned_in=4, now=-1)
    worker.topics = object()  # type: ignore[assignment]
    worker.inflight = None
    assert worker.write_state(worker.tasks[0]) is False
    assert transactions.sent == []
    assert 0 not in worker.tasks
    assert worker.rebuild == {0}
