"""Tasks coming and going with the group's assignment (the consumer's rebalance callbacks).

The range assignor gives partition p of `rounds` and of `bets` to one worker. A task that stays
here through a rebalance, its committed offsets still where it left them, resumes as it is; every
other task assigned here is built (`restore.build`) before the consumer is positioned on its
input. Nothing is folded meanwhile: the callbacks run inside `consume`, between two batches, and
no transaction is open then.
"""

from __future__ import annotations

import contextlib
import logging
import time
from typing import TYPE_CHECKING

from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition

from services import heap
from services.settlement import group, restore
from services.settlement.misrouted import Homes
from services.settlement.recovery import ROLES
from services.settlement.transaction import Failed

if TYPE_CHECKING:
    from services.settlement.loop import Engine

log = logging.getLogger("croupier.engine")


def join(engine: Engine) -> Consumer:
    """The worker's consumer of the inputs, its topics' partitions read, subscribed with the
    engine's rebalance callbacks (which call `assigned`, `revoked` and `lost`)."""
    s = engine.settings
    engine.consumer = consumer = group.consumer(s, engine._consumer_error)
    engine.topics = engine.retrying(
        "output partitions", lambda: group.topics(consumer, s), KafkaException
    )
    engine.homes = Homes(engine.topics.input_partitions)
    consumer.subscribe(
        list(s.inputs),
        on_assign=engine._on_assign,
        on_revoke=engine._on_revoke,
        on_lost=engine._on_lost,
    )
    return consumer


def assigned(engine: Engine, consumer: Consumer, partitions: list[TopicPartition]) -> None:
    """The group's new assignment of this worker: keep, build or block each task, then read."""
    s = engine.settings
    engine.settle()
    wanted = sorted({tp.partition for tp in partitions})
    for p in wanted:
        have = {tp.topic for tp in partitions if tp.partition == p}
        if have != set(s.inputs):
            log.error(
                "partition %d assigned for %s only: rounds and bets must be co-partitioned", p, have
            )
    _forget(engine, [p for p in engine.tasks if p not in wanted])
    for p in [p for p in engine.blocked if p not in wanted]:
        del engine.blocked[p]
    engine.rebuild.intersection_update(wanted)
    kept = _keep(engine, consumer, [p for p in wanted if p in engine.tasks])
    fresh = [p for p in wanted if p not in kept]
    for p in fresh:
        engine.tasks.pop(p, None)
    _build(engine, consumer, fresh)
    _assign(engine, consumer, wanted)


def revoked(engine: Engine, partitions: list[TopicPartition]) -> None:
    """Tasks are kept until the assignment that follows: one that stays here needs no restore;
    one another worker took meanwhile no longer matches its committed offsets, and is built.
    The transaction being committed ends first: none is open across a rebalance."""
    engine.settle()


def lost(engine: Engine, partitions: list[TopicPartition]) -> None:
    """The group went on without this worker (its session expired): its tasks may be another's
    by now, so none is kept; those assigned here again are built from what was committed."""
    engine.settle()
    _forget(engine, sorted({tp.partition for tp in partitions}))
    log.warning(
        "tasks %s lost with the group's session", sorted({tp.partition for tp in partitions})
    )


def rejoin(engine: Engine, error: KafkaError) -> Consumer:
    """The consumer died of a fatal error (`group.fenced`): every task is dropped as with a lost
    session, and a new consumer joins the group, as a restarted worker would; the tasks assigned
    to it are built from what was committed."""
    log.error(
        "consumer: %s; its tasks %s are dropped and a new consumer joins the group",
        error.str(),
        sorted(engine.tasks),
    )
    with contextlib.suppress(Failed):
        engine.settle()  # fails too, most likely: the group metadata it sent is fenced
    _forget(engine, sorted(engine.tasks))
    engine.blocked.clear()
    engine.rebuild.clear()
    engine.generation = None
    old, engine.consumer = engine.consumer, None
    if old is not None:
        with contextlib.suppress(KafkaException, RuntimeError):
            old.close()
    return join(engine)


def _forget(engine: Engine, partitions: list[int]) -> None:
    """Drop tasks that left this worker, and give the C heap's share of their memory back (their
    state holds no reference cycles: it is freed as the last reference goes)."""
    gone = False
    for p in partitions:
        gone |= engine.tasks.pop(p, None) is not None
        engine.metrics.pending.pop(p, None)
    if gone:
        heap.release()


def recover(engine: Engine, consumer: Consumer, partitions: list[int]) -> None:
    """Build tasks again from what was committed (a failed transaction, a blocked task retried)
    and position the consumer on their input."""
    _build(engine, consumer, partitions)
    reposition(engine, consumer)


def rebuild_dropped(engine: Engine, consumer: Consumer) -> None:
    """Build the tasks dropped since (`Engine.drop`) that are still assigned here."""
    engine.settle()
    if engine.generation is None:
        return  # the assignment that follows builds them
    mine = {tp.partition for tp in consumer.assignment()}
    again = sorted(p for p in engine.rebuild if p in mine)
    engine.rebuild.clear()
    if again:
        recover(engine, consumer, again)


def retry_blocked(engine: Engine, consumer: Consumer) -> None:
    """Try blocked tasks again now and then: the operator may have repaired them."""
    engine.settle()
    engine.blocked_at = time.monotonic()
    mine = {tp.partition for tp in consumer.assignment()}
    again = sorted(p for p in engine.blocked if p in mine and p not in engine.tasks)
    if again:
        recover(engine, consumer, again)


def reposition(engine: Engine, consumer: Consumer) -> None:
    """Position the consumer on every task's next offsets again (a task built again, a batch
    read across a rebalance dropped) by giving it its whole assignment again (`_assign`). If the
    consumer refuses, the tasks are built again a second later."""
    partitions = sorted({tp.partition for tp in consumer.assignment()})
    if not partitions:
        return
    try:
        _assign(engine, consumer, partitions)
    except KafkaException as error:
        log.warning("tasks %s could not be positioned (%s); building them again", partitions, error)
        engine.drop(partitions, wait=1.0)


def _assign(engine: Engine, consumer: Consumer, partitions: list[int]) -> None:
    """Assign the consumer partitions p of both inputs: a task's at its next offsets, read; one
    without a task (blocked, or built again at the next turn) paused. An assignment with offsets
    positions a partition whatever its fetch state, where a seek fails on one librdkafka has not
    started fetching (after a broker came back, say). librdkafka keeps a partition paused through
    a rebalance that gives it back, hence the resume."""
    assignment: list[TopicPartition] = []
    paused: list[TopicPartition] = []
    running: list[TopicPartition] = []
    for p in partitions:
        task = engine.tasks.get(p)
        for role, topic in zip(ROLES, engine.settings.inputs, strict=True):
            if task is not None:
                assignment.append(TopicPartition(topic, p, task.positions[role]))
                running.append(TopicPartition(topic, p))
            else:
                assignment.append(TopicPartition(topic, p))
                paused.append(TopicPartition(topic, p))
    consumer.assign(assignment)
    if running:
        consumer.resume(running)
    if paused:
        consumer.pause(paused)


def _keep(engine: Engine, consumer: Consumer, partitions: list[int]) -> set[int]:
    """The tasks whose committed offsets are still where this worker left them."""
    if not partitions:
        return set()
    try:
        committed = restore.stable_offsets(consumer, engine.settings, partitions)
    except KafkaException as error:
        log.info("tasks %s: committed offsets unknown (%s); restoring them", partitions, error)
        return set()
    kept = {
        p
        for p in partitions
        if all(committed[(role, p)] == engine.tasks[p].positions[role] for role in ROLES)
    }
    if kept:
        log.info("tasks %s stay here: resumed without a restore", sorted(kept))
    return kept


def _build(engine: Engine, consumer: Consumer, partitions: list[int]) -> None:
    """Build tasks; a refolded task writes its whole state at once, so that the next takeover
    restores it. A build the brokers fail is tried again a second later from the loop (which
    polls the consumer meanwhile, as the group needs), never here."""
    if not partitions or engine.stopping.is_set():
        return
    try:
        built = restore.build(engine.settings, consumer, partitions, engine.keys, engine.homes)
    except (KafkaException, restore.Unsettled) as error:
        denied = engine.refusal(error)
        if denied is not None:
            engine.denied = denied
            engine.stopping.set()
            return
        log.warning("tasks %s: build failed (%s); retrying in 1 s", partitions, error)
        engine.drop(partitions, wait=1.0)
        return
    finally:
        heap.release()
    for p, reason in built.blocked.items():
        if engine.blocked.get(p) != reason:
            log.error("task %d blocked, nothing of it is settled: %s", p, reason)
        engine.blocked[p] = reason
        engine.blocked_at = time.monotonic()
    for p, task in built.ready.items():
        engine.tasks[p] = task
        engine.blocked.pop(p, None)
        engine.metrics.pending[p] = task.fold.pending
    engine.metrics.blocked = len(engine.blocked)
    for task in list(built.ready.values()):
        mine = engine.tasks.get(task.partition) is task
        if task.store.stale is not None and mine and engine.write_state(task):
            log.info("task %d: whole state written", task.partition)
