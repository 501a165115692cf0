"""A worker's work while no input comes: transactions of a task's state or offsets alone.

- A task's store that is writing its oldest parts again goes on with it (`store.IDLE_CREDIT`
  bytes a transaction), so that its restore offset moves on when the input stops.
- A task's offsets move past the transaction markers its input ends with. A forwarded input
  (`misrouted`) is written by a transaction, so its partition ends with a commit marker that no
  consumer is handed; the consumer's position steps over it, and once nothing else is read the
  task commits that position, so that its group's lag reads 0 when everything is settled, as
  Kafka Streams does (KAFKA-6607).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from confluent_kafka import TopicPartition

from services.settlement.store import IDLE_CREDIT

if TYPE_CHECKING:
    from services.settlement.loop import Engine


def clean(engine: Engine) -> None:
    """A store writing its oldest parts again goes on in a transaction of its own."""
    engine.settle()
    for task in list(engine.tasks.values()):
        if task.store.cleaning:
            engine.write_state(task, IDLE_CREDIT)


def past_markers(engine: Engine) -> None:
    """Commit the consumer's position of each task whose input ends past what it folded: only
    markers (or aborted records, which a read_committed consumer skips) lie between."""
    consumer = engine.consumer
    assert consumer is not None
    tps = [TopicPartition(topic, p) for p in engine.tasks for topic in engine.settings.inputs]
    if not tps:
        return
    moved: set[int] = set()
    for tp in consumer.position(tps):
        task = engine.tasks.get(tp.partition)
        role = engine.kind[tp.topic]
        if task is not None and tp.offset > task.positions[role]:
            task.positions[role] = tp.offset
            moved.add(tp.partition)
    for p in sorted(moved):
        task = engine.tasks.get(p)
        if task is not None:
            engine.write_state(task)
