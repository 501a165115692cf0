"""A task's part of a batch: the messages it read folded into what its transaction writes.

Its journal (the inputs the fold accepted, verbatim, then the decisions it commits) and its
state's changes come first, to partition p of `accepted` and of the state topic, then its records
(`routing`). The fold is fed the messages of `rounds` before those of `bets` (a bet then finds
its round's fate more often, and waits less); the records are the same in any order. An input
read from a partition other than its table's is forwarded there instead (`misrouted`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from schemas.codec import encode_each
from schemas.journal import Decision
from schemas.journal import records as journal_records
from schemas.records import Record, Rejected
from services.settlement.metrics import Metrics
from services.settlement.misrouted import ADVICE, Elsewhere, Homes, cause, table_of
from services.settlement.recovery import ROLES
from services.settlement.restore import Task
from services.settlement.routing import Message, Topics, count, route

log = logging.getLogger("croupier.engine")
Inputs = tuple[list[Any], list[Any]]
"""A task's messages of a batch from `rounds`, then from `bets`."""


@dataclass(kw_only=True)
class Unsent:
    """Batches folded since the last transaction was sent: each task's messages out, with the
    task that folded them and how many batches they are, sent together in the next transaction
    (`loop.AHEAD`)."""

    started: float
    """When the first of them was read (monotonic)."""
    newest: float = 0.0
    """The latest timestamp of their inputs (epoch seconds)."""
    out: dict[int, tuple[Task, list[Message], int]] = field(default_factory=dict)
    batches: int = 0

    def add(self, folded: dict[int, tuple[Task, list[Message]]], newest: float) -> None:
        """One more batch; a task built again since its last batch here keeps only the new."""
        self.batches += 1
        self.newest = max(self.newest, newest)
        for p, (task, messages) in folded.items():
            kept = self.out.get(p)
            if kept is not None and kept[0] is task:
                kept[1].extend(messages)
                self.out[p] = (task, kept[1], kept[2] + 1)
            else:
                self.out[p] = (task, messages, 1)

    def live(self, tasks: dict[int, Task]) -> dict[int, tuple[list[Message], int]]:
        """What the tasks still here produced: a task built again since (its transaction failed,
        or it left and came back) drops what it folded before."""
        return {
            p: (messages, folds)
            for p, (task, messages, folds) in self.out.items()
            if tasks.get(p) is task
        }


def fold(
    task: Task,
    inputs: Inputs,
    topics: Topics,
    metrics: Metrics,
    durable: bool,
    homes: Homes,
) -> list[Message]:
    """Fold a task's messages (confluent-kafka's, in offset order per partition and input) and
    give the messages of its transaction; the task's positions move past them."""
    p = task.partition
    feed = task.fold.feed
    records: list[Record] = []
    keys: dict[int, bytes | None] = {}
    """The key of the input each rejection refuses, by the rejection's place in `records`."""
    out: list[Message] = []
    for role, messages in zip(ROLES, inputs, strict=True):
        if not messages:
            continue
        metrics.events_in[messages[0].topic()] += len(messages)
        for message in messages:
            n = len(records)
            try:
                feed(role, message.value(), records, homes=homes, partition=p)
            except Elsewhere as elsewhere:
                out.append(_forward(message, elsewhere.home, metrics, homes))
                continue
            if len(records) > n and type(records[n]) is Rejected:  # then the only record
                keys[n] = message.key()
        task.positions[role] = messages[-1].offset() + 1
    state = task.fold
    for table_id in sorted(state.boards_changed):
        stats = state.stats(table_id)
        if stats is not None:
            records.append(stats)
    state.boards_changed.clear()
    values = encode_each(records)
    out.extend(
        [route(record, values[n], topics, p, keys.get(n)) for n, record in enumerate(records)]
    )
    count(records, metrics.decisions, metrics.rejections)
    decided = [values[n] for n, record in enumerate(records) if isinstance(record, Decision)]
    return journal(task, topics, decided, metrics, durable=durable) + out


def journal(
    task: Task,
    topics: Topics,
    decided: list[bytes],
    metrics: Metrics,
    *,
    durable: bool,
    credit: int = 0,
) -> list[Message]:
    """The task's journal (its accepted inputs and the decisions it commits, for the read side)
    and, with durable state, its state's changes, to partition p of their topics."""
    p = task.partition
    kept = task.fold.journal
    assert kept is not None
    inputs = [raw for _, raw in kept.accepted]
    out: list[Message] = [
        (topics.accepted, p, None, value, None) for value in journal_records(inputs, decided)
    ]
    if not durable:
        kept.clear()
        return out
    entries = task.store.entries(task.fold, task.positions, credit)
    metrics.state_written(entries)
    out.extend((topics.state, p, key, value, None) for key, value in entries)
    return out


def _forward(message: Any, home: int, metrics: Metrics, homes: Homes) -> Message:
    """The input, unchanged, to its table's partition; counted, and told once per cause."""
    topic, p, key = message.topic(), message.partition(), message.key()
    metrics.misrouted[(topic, p)] += 1
    table_id = table_of(message.value()) or ""
    why = cause(table_id, key, p, homes.partitions)
    if (topic, why) not in homes.told:
        homes.told.add((topic, why))
        log.warning(
            "%s: an input of table %r read from partition %d belongs to partition %d (Kafka's "
            "murmur2 of its table_id): forwarded there, and so is every such input (counted in "
            "croupier_misrouted_total). Likely cause: %s (docs/CONTRACT.md, section 1a)",
            topic,
            table_id,
            p,
            home,
            ADVICE[why],
        )
    return (topic, home, key, message.value(), message.headers() or [])
