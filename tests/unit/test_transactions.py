"""The worker's transactions against a producer that hangs or fails: a step of a commit that does
not return in its time gives the producer up, and a failed transaction's producer is replaced, so
that nothing of it can count in the next one."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from confluent_kafka import KafkaError, KafkaException, TopicPartition

from services.settings import Settings
from services.settlement import transaction
from services.settlement.routing import Message as Out
from services.settlement.transaction import Failed, Transactions

built: list[Producer] = []


class Producer:
    """The transactional calls of confluent-kafka's producer; `hang` names the call that never
    returns (until `release`), `fail` the one that raises a retriable error."""

    hang: str | None = None
    fail: str | None = None

    def __init__(self, config: dict[str, Any]) -> None:
        self.config = config
        self.calls: list[str] = []
        self.release = threading.Event()
        built.append(self)

    def _call(self, name: str) -> None:
        self.calls.append(name)
        if name == Producer.hang:
            self.release.wait(30)
        if name == Producer.fail:
            raise KafkaException(KafkaError(KafkaError._TIMED_OUT, f"{name} timed out"))

    def init_transactions(self, timeout: float) -> None:
        self._call("init")

    def begin_transaction(self) -> None:
        self._call("begin")

    def produce(self, *args: Any, **kwargs: Any) -> None:
        self._call("produce")

    def send_offsets_to_transaction(self, offsets: Any, group: Any, timeout: float) -> None:
        self._call("offsets")

    def commit_transaction(self, timeout: float) -> None:
        self._call("commit")

    def abort_transaction(self, timeout: float) -> None:
        self._call("abort")

    def flush(self, timeout: float) -> int:
        return 0


@pytest.fixture(autouse=True)
def fake_producer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(transaction, "Producer", Producer)
    monkeypatch.setattr(transaction, "WATCHDOG", {"offsets": 0.3, "end": 0.6})
    monkeypatch.setattr(transaction, "LEFT_BEHIND", [])
    built.clear()
    Producer.hang = Producer.fail = None


def _transactions() -> Transactions:
    made = Transactions(Settings(kafka_bootstrap="127.0.0.1:9", instance_id="w1"))
    made.start()
    return made


OFFSETS = [TopicPartition("rounds", 0, 10), TopicPartition("bets", 0, 20)]
MESSAGE: list[Out] = [("settlements", None, b"k", b"v", None)]


def test_a_commit_sends_the_offsets_then_ends_the_transaction() -> None:
    txn = _transactions()
    txn.commit(MESSAGE, OFFSETS, group=None)
    assert built[0].calls == ["init", "begin", "produce", "offsets", "commit"]
    assert built[0].config["transactional.id"] == "croupier-settlement-w1"


def test_offsets_that_do_not_go_in_their_time_give_the_producer_up() -> None:
    Producer.hang = "offsets"
    txn = _transactions()
    txn.send(MESSAGE, OFFSETS, group=None)
    with pytest.raises(Failed, match="sending its offsets"):
        txn.settle()
    left = transaction.LEFT_BEHIND
    assert left == [built[0]]  # kept alive while its call runs
    assert "commit" not in built[0].calls
    built[0].release.set()


def test_an_end_that_does_not_return_in_its_time_gives_the_producer_up() -> None:
    Producer.hang = "commit"
    txn = _transactions()
    txn.send(MESSAGE, OFFSETS, group=None)
    with pytest.raises(Failed, match="its end"):
        txn.settle()
    left = transaction.LEFT_BEHIND
    assert left == [built[0]]
    built[0].release.set()


def test_a_failed_transaction_is_aborted_and_its_producer_replaced_by_a_registered_one() -> None:
    Producer.fail = "offsets"
    txn = _transactions()
    txn.send(MESSAGE, OFFSETS, group=None)
    with pytest.raises(Failed, match="aborted"):
        txn.settle()
    assert built[0].calls[-1] == "abort"
    Producer.fail = None
    txn.renew()
    txn.start()
    assert len(built) == 2 and txn.producer is built[1]
    assert built[1].config["transactional.id"] == built[0].config["transactional.id"]
    txn.commit(MESSAGE, OFFSETS, group=None)
    assert built[1].calls == ["init", "begin", "produce", "offsets", "commit"]
    assert built[0].calls.count("begin") == 1  # the old producer is never used again


def test_a_registration_beside_the_restore_is_waited_for_by_the_first_transaction() -> None:
    Producer.hang = "init"
    txn = Transactions(Settings(kafka_bootstrap="127.0.0.1:9", instance_id="w1"))
    txn.register_beside(txn.start)
    txn.registered(wait=False)  # still registering: returns at once
    threading.Timer(0.2, built[0].release.set).start()
    txn.commit(MESSAGE, OFFSETS, group=None)
    assert built[0].calls == ["init", "begin", "produce", "offsets", "commit"]


def test_a_registration_that_failed_beside_the_restore_fails_the_next_look_at_it() -> None:
    def refused() -> None:
        raise PermissionError("transactional id: not authorized")

    txn = Transactions(Settings(kafka_bootstrap="127.0.0.1:9", instance_id="w1"))
    txn.register_beside(refused)
    with pytest.raises(PermissionError, match="not authorized"):
        for _ in range(100):  # as the engine's loop looks, between two batches
            txn.registered(wait=False)
            threading.Event().wait(0.01)
    txn.registered(wait=False)  # told once
    assert built[0].calls == []  # nothing was begun


def test_a_transaction_after_a_failed_registration_raises_its_failure() -> None:
    Producer.fail = "init"
    txn = Transactions(Settings(kafka_bootstrap="127.0.0.1:9", instance_id="w1"))
    txn.register_beside(txn.start)
    with pytest.raises(KafkaException, match="init timed out"):
        txn.send(MESSAGE, OFFSETS, group=None)
    assert built[0].calls == ["init"]  # no transaction begun


def test_a_commit_tells_when_it_was_committed_not_when_it_was_waited_for() -> None:
    txn = _transactions()
    sent = time.monotonic()
    txn.send(MESSAGE, OFFSETS, group=None)
    time.sleep(0.2)  # the loop folds meanwhile
    txn.settle()
    assert sent <= txn.committed_at() < sent + 0.1
