"""The worker's transactions: a batch's records and its input offsets, committed together.

One transactional producer per worker (exactly-once v2, KIP-447): each transaction holds every
record a batch's tasks produce (or a few batches', read while the previous one committed) and,
through `send_offsets_to_transaction` with the consumer's group metadata, their input offsets. The
group coordinator refuses those offsets from a member of an older generation, so a worker that lost
its tasks in a rebalance (paused, partitioned from the group) cannot commit anything: its
transaction aborts. Its transactional id is `<prefix>-<instance id>`, so a worker restarted with the
same instance id aborts at once any transaction its previous process left open; a takeover by
another worker waits for that transaction's timeout instead (docs/DESIGN.md, "Exactly once").
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from confluent_kafka import KafkaError, KafkaException, Producer, TopicPartition

from services.security import clients
from services.settings import Settings
from services.settlement.routing import Message as Out

log = logging.getLogger("croupier.transaction")
MAX_REQUEST: Final = 16 * 1024 * 1024
TIMEOUT: Final = 15.0
"""Seconds a transactional call may block before it fails (and the tasks are rebuilt)."""
WATCHDOG: Final = {"offsets": TIMEOUT + 5.0, "end": 2 * TIMEOUT + 5.0}
"""Seconds after which a step of a commit that has not returned is given up, with its producer:
sending the offsets (one call of TIMEOUT), then ending the transaction (retried for TIMEOUT).
librdkafka's coordinator requests can outlive their timeout when the coordinator moves
(librdkafka issues 5456 and 5511), and a worker must not hang on one."""
LEFT_BEHIND: list[Producer] = []
"""Producers given up while a call of theirs was still running: kept, since freeing one then would
crash the process; each is fenced by the producer that replaces it."""


@dataclass(frozen=True, kw_only=True)
class Inflight:
    """A transaction sent and committing: its tasks, size and times (monotonic; newest: the
    latest timestamp of the last input read of each partition, epoch seconds)."""

    folds: dict[int, int]
    """How many batches of each task the transaction holds."""
    out: int
    started: float
    folded: float
    newest: float

    @property
    def partitions(self) -> list[int]:
        """The tasks of the transaction."""
        return sorted(self.folds)


@dataclass
class Step:
    """Where a commit's thread is: sending the offsets, then ending the transaction; since when,
    and when it was committed (monotonic)."""

    name: Literal["offsets", "end"] = "offsets"
    since: float = field(default_factory=time.monotonic)
    committed: float | None = None


class Failed(Exception):
    """The transaction did not commit: none of its records or offsets count. Its producer is
    replaced (`renew`) before the next one."""


def transactional_id(settings: Settings) -> str:
    """The worker's transactional id: stable across restarts of one static member."""
    own = settings.instance_id or f"{socket.gethostname()}-{os.getpid()}"
    return f"{settings.transactional_prefix}-{own}"


class Transactions:
    """The worker's transactional producer."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.id = transactional_id(settings)
        """The same for every producer of one worker process."""
        self.producer = self._producer()
        self.ends: dict[tuple[str, int], int] = {}
        self._committing: threading.Thread | None = None
        self._failure: list[BaseException] = []
        self._step = Step()
        self._registering: tuple[threading.Thread, list[BaseException]] | None = None

    def _producer(self) -> Producer:
        settings = self.settings
        return Producer(
            {
                **clients.librdkafka(settings),
                "client.id": self.id,
                "transactional.id": self.id,
                "transaction.timeout.ms": settings.transaction_timeout_ms,
                "enable.idempotence": True,
                "acks": "all",
                "linger.ms": 0,
                "compression.type": settings.compression,
                "batch.size": 1024 * 1024,
                "message.max.bytes": MAX_REQUEST,
                "queue.buffering.max.messages": 2_000_000,
                "queue.buffering.max.kbytes": 1024 * 1024,
                "partitioner": "murmur2_random",
                "error_cb": _error,
            }
        )

    def start(self) -> None:
        """Register the transactional id (aborting any transaction its last process left); a
        producer this fails for good is replaced, for the next attempt."""
        try:
            self.producer.init_transactions(TIMEOUT)
        except KafkaException as error:
            if error.args and error.args[0].fatal():
                self.renew()
            raise

    def register_beside(self, register: Callable[[], None]) -> None:
        """Run `register` (`start`, and what must follow it before anything is written) in a
        thread of its own, while the caller joins the group and restores its tasks; the next
        transaction waits for it, and raises what it raised (docs/DESIGN.md, "Recovery")."""
        self._registering = _started("croupier-register", register)

    def registered(self, wait: bool = True) -> None:
        """Wait for a registration run by `register_beside` (or, without `wait`, only look
        whether it ended); raise what it raised."""
        if self._registering is None:
            return
        thread, failure = self._registering
        if not wait and thread.is_alive():
            return
        self._registering = None
        thread.join()
        if failure:
            raise failure[0]

    def committed_at(self) -> float:
        """When the transaction `settle` waited for last was committed (monotonic): the loop
        may see it later, busy folding or waiting for input."""
        return self._step.committed or time.monotonic()

    def committing(self) -> bool:
        """The transaction sent last is still committing."""
        return self._committing is not None and self._committing.is_alive()

    def renew(self) -> None:
        """Replace the producer after a failed transaction (`start` registers the new one).

        librdkafka does not bump the producer's epoch after each transaction (KIP-890's second
        part): a request of a failed transaction still in flight, or retried late (a produce, the
        offsets), would count in the next transaction of the same producer, which has the same
        epoch. A new producer's registration bumps the epoch, so the brokers refuse every late
        request of the old one, and it completes the old transaction first (aborted, or
        committed if its end was already asked), so that what is read back next is final."""
        self._committing = None
        self.producer = self._producer()

    def close(self) -> None:
        if self.producer not in LEFT_BEHIND:
            self.producer.flush(5)

    def commit(
        self, messages: Sequence[Out], offsets: list[TopicPartition], group: Any
    ) -> dict[tuple[str, int], int]:
        """One transaction of these messages and offsets, committed before it returns."""
        self.send(messages, offsets, group)
        return self.settle()

    def send(self, messages: Sequence[Out], offsets: list[TopicPartition], group: Any) -> None:
        """Begin a transaction, hand it the messages, and leave it committing in a thread of its
        own with the input offsets (`settle` waits for it), while the caller folds the next batch:
        librdkafka waits for the brokers with the interpreter lock released. The group's metadata
        names the consumer's generation: an older one is refused. Raises Failed."""
        self.registered()
        self.ends = {}
        try:
            self.producer.begin_transaction()
            self._produce(messages)
        except KafkaException as error:
            self._failed(error)
        step = self._step = Step()

        def run() -> None:
            if offsets:
                self.producer.send_offsets_to_transaction(offsets, group, TIMEOUT)
            step.name, step.since = "end", time.monotonic()
            self._commit()
            step.committed = time.monotonic()

        self._committing, self._failure = _started("croupier-commit", run)

    def settle(self) -> dict[tuple[str, int], int]:
        """Wait for the transaction being committed: the offset after the last record of each
        partition of the state topic it wrote (where the task's store now ends). Raises Failed."""
        thread, self._committing = self._committing, None
        if thread is None:
            return self.ends
        while thread.is_alive():
            name, limit = self._step.name, WATCHDOG[self._step.name]
            if time.monotonic() - self._step.since > limit:
                LEFT_BEHIND.append(self.producer)
                what = "sending its offsets" if name == "offsets" else "its end"
                raise Failed(
                    f"the commit ({what}) did not return in {limit:.0f} s; the producer is given up"
                )
            thread.join(0.1)
        if self._failure:
            error = self._failure[0]
            if isinstance(error, KafkaException):
                self._failed(error)
            raise error
        return self.ends

    def _produce(self, messages: Sequence[Out]) -> None:
        """Hand the messages to librdkafka: keyed ones to their key's partition, the others to
        theirs; the last of each state partition reports its offset (ends)."""
        produce = self.producer.produce
        state = self.settings.topic_state
        last: dict[int, int] = {}
        for n, (topic, partition, _, _, _) in enumerate(messages):
            if topic == state and partition is not None:
                last[partition] = n
        marked = set(last.values())
        delivered = self._delivered
        for n, (topic, partition, key, value, headers) in enumerate(messages):
            try:
                if partition is None:
                    produce(topic, value, key)
                elif headers is not None:  # a forwarded input (docs/CONTRACT.md, section 1a)
                    produce(topic, value, key, partition, headers=headers)
                elif n in marked:
                    produce(topic, value, key, partition, on_delivery=delivered)
                else:
                    produce(topic, value, key, partition)
            except BufferError:
                self.producer.poll(0.05)
                self._produce(messages[n:])
                return

    def _delivered(self, error: KafkaError | None, message: Any) -> None:
        if error is None:
            self.ends[(message.topic(), message.partition())] = message.offset() + 1

    def _commit(self) -> None:
        """Commit, again while librdkafka says it may be retried (`settle` watches the thread)."""
        deadline = time.monotonic() + TIMEOUT
        while True:
            try:
                self.producer.commit_transaction(TIMEOUT)
                return
            except KafkaException as error:
                cause = error.args[0]
                if not cause.retriable() or time.monotonic() > deadline:
                    raise

    def _bounded(self, what: str, call: Callable[[], None]) -> None:
        """Run a transactional call, giving it up (and this producer) if it outlives WATCHDOG."""
        thread, failure = _started(f"croupier-{what}", call)
        thread.join(WATCHDOG["end"])
        if thread.is_alive():
            LEFT_BEHIND.append(self.producer)
            raise Failed(
                f"{what} did not return in {WATCHDOG['end']:.0f} s; the producer is given up"
            )
        if failure:
            raise failure[0]

    def _failed(self, error: KafkaException) -> None:
        """Abort what can be aborted (the producer that replaces this one aborts the rest)."""
        cause = error.args[0] if error.args else None
        if isinstance(cause, KafkaError) and cause.fatal():
            raise Failed(str(cause)) from error
        try:
            self._bounded("abort_transaction", lambda: self.producer.abort_transaction(TIMEOUT))
        except KafkaException as again:
            raise Failed(f"{cause}; the abort failed too ({again.args[0]})") from error
        raise Failed(f"{cause}; aborted") from error


def _started(name: str, call: Callable[[], None]) -> tuple[threading.Thread, list[BaseException]]:
    """`call` running in a thread of its own, and the list that gets what it raised."""
    failure: list[BaseException] = []

    def run() -> None:
        try:
            call()
        except BaseException as error:
            failure.append(error)

    thread = threading.Thread(target=run, name=name, daemon=True)
    thread.start()
    return thread, failure


def _error(error: KafkaError) -> None:
    """librdkafka's background errors: it retries them itself, so they are only told."""
    if error.fatal():
        log.error("producer: %s", error)
    else:
        log.info("producer: %s", error)
