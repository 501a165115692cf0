"""After each registration of its transactional id, a worker ends its producer's transactions that
the brokers left open on a partition (their markers skipped), and only those: none of its own can
be open then, and other producers' are not its business. Each is ended as the coordinator's log
says it was decided; when the log no longer says, nothing is written and the worker stops."""

from __future__ import annotations

import time
from types import SimpleNamespace
from typing import Any

import pytest
from kafka import TopicPartition  # type: ignore[import-untyped]
from kafka.admin._transactions import AbortTransactionSpec  # type: ignore[import-untyped]
from kafka.errors import (  # type: ignore[import-untyped]
    ClusterAuthorizationFailedError,
    NodeNotReadyError,
)

from services.settings import Settings
from services.settlement import dangling, fencing
from services.settlement.loop import Engine
from services.settlement.txnlog import Entry, Outcome, Status

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
        self.committed: list[Any] = []

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

    def commit_transaction(self, spec: Any) -> None:
        self.committed.append(spec)


def aborted_at_registration(*partitions: TopicPartition) -> list[Entry]:
    """The coordinator's log when producer 7's transaction at epoch 3 was open as its id
    registered again: aborted at epoch 4."""
    named = frozenset((tp.topic, tp.partition) for tp in partitions)
    return [Entry(ID, 7, 3, Status.ONGOING, named), Entry(ID, 7, 4, Status.PREPARE_ABORT, named)]


def never_read() -> list[Entry]:
    raise AssertionError("the coordinator's log is read only when a transaction is found open")


def test_an_open_transaction_of_an_older_epoch_of_its_producer_is_aborted_there() -> None:
    left = TopicPartition("settlements", 1)
    offsets = TopicPartition("__consumer_offsets", 0)
    admin = Admin({left: [producer(7, 3, 2624)], offsets: [producer(7, 3, 88, 4)]})
    ended = dangling.close(
        admin, lambda: aborted_at_registration(left, offsets), ID, ["settlements", "state"]
    )
    assert [(d.partition, d.start, how) for d, how in ended] == [
        (offsets, 88, Outcome.ABORT),
        (left, 2624, Outcome.ABORT),
    ]
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
    assert dangling.close(admin, never_read, ID, ["settlements", "state"]) == []
    assert admin.aborted == admin.committed == []


def test_a_transaction_the_coordinator_was_committing_is_committed_there() -> None:
    # Found by make chaos: a 10,040-record transaction committed 60 ms before the broker was
    # killed; the restarted broker skipped its markers. Aborting it lost 5,401 settlements.
    left = TopicPartition("settlements", 1)
    both = frozenset({("settlements", 1), ("state", 0)})
    log = [
        Entry(ID, 7, 3, Status.ONGOING, both),
        Entry(ID, 7, 3, Status.PREPARE_COMMIT, both),
        Entry(ID, 7, 3, Status.COMPLETE_COMMIT, frozenset()),
        Entry(ID, 7, 5, Status.EMPTY, frozenset()),
    ]
    admin = Admin({left: [producer(7, 3, 2624)]})
    ended = dangling.close(admin, lambda: log, ID, ["settlements", "state"])
    assert [(d.partition, how) for d, how in ended] == [(left, Outcome.COMMIT)]
    assert [(c.topic_partition, c.producer_id, c.producer_epoch) for c in admin.committed] == [
        (left, 7, 3)
    ]
    assert admin.aborted == []


def test_an_undecided_transaction_stops_the_worker_before_anything_is_written() -> None:
    left = TopicPartition("settlements", 1)
    decided = TopicPartition("state", 0)
    admin = Admin({left: [producer(7, 3, 2624)], decided: [producer(7, 3, 12)]})
    with pytest.raises(dangling.Undecided) as refused:
        dangling.close(
            admin, lambda: aborted_at_registration(decided), ID, ["settlements", "state"]
        )
    assert "settlements-1 (epoch 3, from offset 2624)" in str(refused.value)
    assert "kafka-transactions.sh" in str(refused.value)
    assert admin.aborted == admin.committed == []


def test_the_commit_marker_is_the_abort_marker_with_the_other_result() -> None:
    spec = AbortTransactionSpec(TopicPartition("settlements", 2), 7, 3, 4)
    (marker,) = dangling.commit_request(spec).markers
    assert (marker.producer_id, marker.producer_epoch, marker.coordinator_epoch) == (7, 3, 4)
    assert marker.transaction_result is True
    assert [(t.name, list(t.partition_indexes)) for t in marker.topics] == [("settlements", [2])]


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


def test_an_undecided_transaction_is_not_asked_again_but_ends_the_registration(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    engine = _engine(monkeypatch, [dangling.Undecided("settlements-1 open"), 0])
    with pytest.raises(dangling.Undecided, match="settlements-1 open"):
        fencing.register(engine)
    assert engine.dangling_unchecked is False
