"""The settlement engine: consume, fold, produce, exactly once; one task per input partition.

Task p owns partition p of `rounds` and of `bets` (co-partitioned by table_id; the range assignor
gives both to one worker). Each batch the consumer returns is one transaction of the worker's
producer (`transaction`), holding what the batch's tasks produce: their records, their journal
(partition p of `accepted`), their state's changes (partition p of the state topic, `store`) and
their input offsets. A task is built by `restore` when it is assigned here, and again from what
was committed whenever a transaction fails. The engine runs in a thread of its own; the faust
worker hosting it serves /health and /metrics from its attributes.
"""

from __future__ import annotations

import contextlib
import io
import logging
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition

from services import reading
from services.security.denied import AccessDenied
from services.security.login import Unreachable, check
from services.settings import Settings
from services.settlement import batch, committed, fencing, group, rebalance
from services.settlement import idle as idle_work
from services.settlement.metrics import Metrics
from services.settlement.misrouted import Homes
from services.settlement.recovery import ROLES
from services.settlement.restore import Task
from services.settlement.routing import Message as Out
from services.settlement.routing import Topics
from services.settlement.transaction import Failed, Inflight, Transactions, transactional_id
from services.signing.keys import load as load_keys
from services.topics import broker_errors, ensure

log = logging.getLogger("croupier.engine")
T = TypeVar("T")
IDLE = 1.0
"""Seconds without input after which a task's store writing its oldest parts again goes on in
transactions of its own, so that its restore offset moves on when the input stops."""
BLOCKED_RETRY = 30.0
"""Seconds between two attempts to start a blocked task."""
AHEAD = 4
"""Batches folded, at most, while the last transaction commits: the next one holds them all."""


class Engine:
    """Consume rounds and bets, fold them, and commit outputs with offsets, batch by batch."""

    def __init__(self, settings: Settings, metrics: Metrics | None = None) -> None:
        self.settings = settings
        self.metrics = metrics or Metrics()
        self.tasks: dict[int, Task] = {}
        self.blocked: dict[int, str] = {}
        self.blocked_at = 0.0
        self.stopping = threading.Event()
        self.denied: AccessDenied | None = None
        """Set when the brokers refused this worker's principal: it stops, and says why."""
        self.keys = load_keys(settings.table_keys_file)
        """Read once, at start: a changed keys file takes effect when the worker restarts."""
        self.kind = dict(zip(settings.inputs, ROLES, strict=True))
        self.transactional_id = transactional_id(settings)
        self.topics: Topics | None = None
        self.homes = Homes(1)
        """Where each input belongs (`misrouted`), for the input partitions of `topics`."""
        self.consumer: Consumer | None = None
        self.transactions: Transactions | None = None
        self.inflight: Inflight | None = None
        """The transaction being committed while the next batches are folded."""
        self.unsent: batch.Unsent | None = None
        self.rebuild: set[int] = set()
        self.rebuild_at = 0.0
        self.assignments = 0
        """Counts the rebalance callbacks run, to tell a batch read across one."""
        self.dangling_unchecked = False  # the principal may not look for them (`fencing`)
        self.fenced: KafkaError | None = None
        """A fatal error the consumer's error callback was given (`group.fenced`)."""
        self.generation: int | None = None
        """The group generation whose assignment the tasks follow (None: between a revocation
        and the next assignment); a transaction is sent only in it (`fencing.member`)."""

    def stop(self) -> None:
        self.stopping.set()

    def run(self) -> None:
        """Process until stop() is called; every failure of a task is recovered in place, except
        a refusal of the brokers (authentication or a missing ACL), which stops the engine with
        an AccessDenied that names the principal, the resource and the permission."""
        try:
            self._run()
        except AccessDenied as error:
            self._deny(error)
        except Exception as error:
            denied = self.refusal(error)
            if denied is None:
                raise
            self._deny(denied)

    def refusal(self, error: BaseException) -> AccessDenied | None:
        ids = f"transactional id {self.settings.transactional_prefix}-<instance>"
        return group.refusal(self.settings, error, ids)

    def _deny(self, denied: AccessDenied) -> None:
        self.denied = denied
        self.stopping.set()
        log.critical("refused by the brokers, stopping: %s", denied)
        raise denied

    def _run(self) -> None:
        s = self.settings
        began = time.monotonic()
        self.retrying("log in", lambda: check(s), Unreachable)
        problems = self.retrying("topics", lambda: ensure(s, io.StringIO()), broker_errors())
        if problems:
            raise RuntimeError("; ".join(problems))
        log.info("logged in, topics checked: %.2f s", time.monotonic() - began)
        self.transactions = Transactions(s)
        self.transactions.register_beside(lambda: fencing.register(self))
        try:
            consumer = rebalance.join(self)
            idle = time.monotonic()
            while not self.stopping.is_set():
                self.transactions.registered(wait=False)  # a refusal stops the worker at once
                assignments = self.assignments
                reading_since = time.monotonic()
                messages = reading.take(consumer, s.batch_records, 0 if self.unsent else 0.2)
                self.metrics.loop_seconds["read"] += time.monotonic() - reading_since
                fenced = group.fenced(messages) or self.fenced
                self.fenced = None
                if fenced is not None:
                    consumer = rebalance.rejoin(self, fenced)
                    continue
                if self.assignments != assignments:
                    # tasks were built inside `take`: what it returned may have been fetched
                    # before (past their positions); dropped, and read again from them
                    rebalance.reposition(self, consumer)
                    continue
                if messages:
                    idle = time.monotonic()
                    self._process(messages)
                else:
                    self.settle()
                    if time.monotonic() - idle > IDLE:
                        idle_work.clean(self)
                        idle_work.past_markers(self)
                if self.rebuild and time.monotonic() >= self.rebuild_at:
                    rebalance.rebuild_dropped(self, consumer)
                if self.blocked and time.monotonic() - self.blocked_at > BLOCKED_RETRY:
                    rebalance.retry_blocked(self, consumer)
        finally:
            with contextlib.suppress(Failed, AccessDenied):
                self.settle()
            self.tasks.clear()
            if self.consumer is not None:
                self.consumer.close()
            self.transactions.close()
        if self.denied is not None:
            raise self.denied

    def retrying(self, what: str, call: Callable[[], T], errors: Any) -> T:
        """What `call` gives, tried again each second while the brokers are not reachable."""
        while True:
            try:
                return call()
            except errors as error:
                if self.stopping.is_set() or self.refusal(error) is not None:
                    raise
                log.warning("%s: broker not reachable (%r); retrying in 1 s", what, error)
                time.sleep(1)

    def _consumer_error(self, error: KafkaError) -> None:
        """librdkafka's background errors: retried by it, so told; a fatal one (the consumer
        fenced) is kept for the loop, which joins again with a new consumer."""
        if group.fenced([error]) is not None:
            self.fenced = error
        else:
            log.info("consumer: %s", error)

    # -- rebalances (the consumer calls these from consume(), between two batches) --

    def _on_assign(self, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        self.assignments += 1
        self.generation = group.generation(consumer.consumer_group_metadata())
        self._partitions_again()
        rebalance.assigned(self, consumer, partitions)

    def _partitions_again(self) -> None:
        """Read the topics' partitions again (more input partitions move tables, and every worker
        must forward to the same ones), of the producer (docs/DESIGN.md, "Inside a callback")."""
        assert self.transactions is not None
        try:
            topics = group.topics(self.transactions.producer, self.settings, timeout=5)
        except (KafkaException, RuntimeError) as error:
            log.warning("topics' partitions not read again (%s); keeping the last known", error)
            return
        self.topics = topics
        if topics.input_partitions != self.homes.partitions:
            self.homes = Homes(topics.input_partitions)

    def _on_revoke(self, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        self.assignments += 1
        rebalance.revoked(self, partitions)
        self.generation = None

    def _on_lost(self, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        self.assignments += 1
        rebalance.lost(self, partitions)
        self.generation = None

    # -- batches --

    def _process(self, messages: list[Any]) -> None:
        """Fold one batch; what its tasks produce goes, with their offsets, in the next
        transaction, sent once the last one is committed (the batches folded meanwhile go with
        it, up to AHEAD) and committed while the next batches are folded."""
        started = time.monotonic()
        topics = self.topics
        assert topics is not None
        tasks = self.tasks
        kind = self.kind
        work: dict[int, batch.Inputs] = {}
        for message in messages:
            error = message.error()
            if error is not None:
                self._consumer_message_error(error)
                continue
            p = message.partition()
            task = tasks.get(p)
            role = kind[message.topic()]
            if task is not None and message.offset() >= task.positions[role]:
                inputs = work.get(p)
                if inputs is None:
                    inputs = work[p] = ([], [])
                inputs[role == "bets"].append(message)
        if not work:
            return
        durable = self.settings.durable_state
        homes = self.homes
        folded = {
            p: (tasks[p], batch.fold(tasks[p], inputs, topics, self.metrics, durable, homes))
            for p, inputs in work.items()
        }
        newest = max(m[-1].timestamp()[1] for inputs in work.values() for m in inputs if m) / 1000
        unsent = self.unsent = self.unsent or batch.Unsent(started=started)
        unsent.add(folded, newest)
        spent = self.metrics.loop_seconds
        waiting = time.monotonic()
        spent["fold"] += waiting - started
        assert self.transactions is not None
        if self.transactions.committing() and unsent.batches < AHEAD:
            return
        self._settle_inflight()
        spent["wait"] += time.monotonic() - waiting
        self._send_unsent()

    def _send_unsent(self) -> None:
        """Send the batches folded since the last transaction was sent, of the tasks still
        here, in one transaction."""
        unsent, self.unsent = self.unsent, None
        live = {} if unsent is None else unsent.live(self.tasks)
        if unsent is None or not live:
            return
        producing = time.monotonic()
        out = [message for p in sorted(live) for message in live[p][0]]
        folds = {p: folds for p, (_, folds) in live.items()}
        self._send(out, folds, unsent.started, unsent.newest)
        self.metrics.loop_seconds["produce"] += time.monotonic() - producing

    def _offsets(self, partitions: list[int]) -> list[TopicPartition]:
        return [
            TopicPartition(topic, p, self.tasks[p].positions[role])
            for p in partitions
            for role, topic in zip(ROLES, self.settings.inputs, strict=True)
        ]

    def _send(self, out: list[Out], folds: dict[int, int], started: float, newest: float) -> None:
        """Send a transaction of the tasks' batches (how many of each: `folds`), and leave it
        committing (`settle` waits for it)."""
        assert self.transactions is not None and self.consumer is not None
        folded = time.monotonic()
        partitions = sorted(folds)
        metadata = fencing.member(self)
        if metadata is None:
            fencing.outdated(self, partitions)
            return
        try:
            self.transactions.send(out, self._offsets(partitions), metadata)
        except Failed as error:
            self._failed(error, partitions)
            return
        self.inflight = Inflight(
            folds=folds,
            out=len(out),
            started=started,
            folded=folded,
            newest=newest,
        )

    def settle(self) -> None:
        """Commit everything folded: wait for the transaction committing, then send the batches
        folded since and wait for them too."""
        self._settle_inflight()
        if self.unsent is not None:
            self._send_unsent()
            self._settle_inflight()

    def _settle_inflight(self) -> None:
        """Wait for the transaction being committed, and keep what it committed."""
        inflight, self.inflight = self.inflight, None
        if inflight is None:
            return
        assert self.transactions is not None and self.topics is not None
        try:
            ends = self.transactions.settle()
        except Failed as error:
            self._failed(error, inflight.partitions)
            return
        state = self.topics.state
        ends_of = {p: ends.get((state, p)) for p in inflight.partitions}
        durable = ends_of if self.settings.durable_state else None
        done = self.transactions.committed_at()
        committed.kept(inflight, self.tasks, durable, self.metrics, done)

    def _failed(self, error: Failed, partitions: list[int]) -> None:
        """A transaction failed: the producer is replaced, and its tasks are built again from
        what was committed (no other transaction is open then: the others' tasks stay)."""
        denied = self.refusal(error)
        if denied is not None:
            raise denied from error
        log.warning(
            "tasks %s: transaction failed (%s); rebuilding from what was committed",
            sorted(partitions),
            error,
        )
        self.drop(partitions)
        assert self.transactions is not None
        self.transactions.renew()
        fencing.register(self)

    def drop(self, partitions: list[int], wait: float = 0.0) -> None:
        """Drop the partitions' tasks, folded past what was committed or never built: they are
        built again from what was committed, `wait` seconds from now, if still assigned here."""
        for p in partitions:
            self.tasks.pop(p, None)
        self.rebuild.update(partitions)
        self.rebuild_at = time.monotonic() + wait

    def _consumer_message_error(self, error: KafkaError) -> None:
        denied = self.refusal(KafkaException(error))
        if denied is not None:
            raise denied
        log.warning("consumer: %s", error)

    # -- work without input --

    def write_state(self, task: Task, credit: int = 0) -> bool:
        """A transaction of the task's state alone (a refold's whole state, or more of its oldest
        parts written again), committed before it returns; False when it failed and the task is
        to be built again. The task's offsets go with it, so that a worker no longer in the group
        cannot write it."""
        assert self.topics is not None and self.transactions is not None
        assert self.consumer is not None
        self.settle()
        metadata = fencing.member(self)
        if metadata is None:
            fencing.outdated(self, [task.partition])
            return False
        out = batch.journal(
            task, self.topics, [], self.metrics, durable=self.settings.durable_state, credit=credit
        )
        try:
            ends = self.transactions.commit(out, self._offsets([task.partition]), metadata)
        except Failed as error:
            self._failed(error, [task.partition])
            return False
        if self.settings.durable_state:
            committed.stored(task, ends.get((self.topics.state, task.partition)))
        return True
