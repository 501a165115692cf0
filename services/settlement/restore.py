"""Building tasks given to this worker: restored from their state, refolded, or blocked.

A task's committed input offsets are read first. They are read_committed (KIP-447's stable
offsets): a transaction its previous owner left open with offsets in it ends (committed, aborted,
or timed out) before they are given, so the state partition's last stable offset, read next, is
final for this task. Then `recovery.plan` says how the task starts, and the refolds read their
input (docs/DESIGN.md, "Restore").
"""

from __future__ import annotations

import contextlib
import logging
import time
from dataclasses import dataclass

from confluent_kafka import Consumer, KafkaError, KafkaException, Message, TopicPartition

from services import collector, reading
from services.settings import Settings
from services.settlement import changelog, state
from services.settlement.fold import Fold
from services.settlement.misrouted import Elsewhere, Homes
from services.settlement.recovery import ROLES, Blocked, Refold, Restored, plan
from services.settlement.rounds import Journal
from services.settlement.store import Positions, Store
from services.signing.signature import TableKeys

log = logging.getLogger("croupier.engine")
TIMEOUT = 10.0
STABLE_WAIT = 30.0
"""Seconds to wait for a previous owner's open transaction to end before the build fails."""


@dataclass(kw_only=True)
class Task:
    """Partition p of rounds and bets: its fold, its state store, and the next offsets to read."""

    partition: int
    fold: Fold
    store: Store
    positions: Positions
    ready_at: float | None = None
    """When the task was (re)built, until its first transaction is committed (logged then)."""


@dataclass(kw_only=True)
class Built:
    """Tasks ready to run and those blocked (why), from one build."""

    ready: dict[int, Task]
    blocked: dict[int, str]


def build(
    settings: Settings, consumer: Consumer, partitions: list[int], keys: TableKeys, homes: Homes
) -> Built:
    """Restore, refold or block each task, and log where the time went; `homes` tells the inputs
    a task folds from those it forwarded (`misrouted`)."""
    s = settings
    started = time.monotonic()
    cpu = time.process_time()
    committed = stable_offsets(consumer, s, partitions)
    offsets = time.monotonic()
    reader = changelog.reader(s)
    try:
        beginnings = {
            (role, p): reading.bounds_of(reader, TopicPartition(topic, p))[0]
            for p in partitions
            for role, topic in zip(ROLES, s.inputs, strict=True)
        }
    finally:
        reader.close()
    logs = changelog.read(s, partitions) if s.durable_state else {}
    _settled(s, logs, committed)
    read = time.monotonic()
    for p, found in logs.items():
        if found.note is not None:
            log.warning("task %d: %s partition %d: %s", p, s.topic_state, p, found.note)
    built = Built(ready={}, blocked={})
    refolds: dict[int, Refold] = {}
    with collector.paused():  # a restore builds many objects that all stay
        for p in partitions:
            log_p = logs.get(p)
            start = plan(
                None if log_p is None else log_p.entries,
                {role: committed[(role, p)] for role in ROLES},
                {role: beginnings[(role, p)] for role in ROLES},
                horizon=s.horizon,
                partial=s.partial_history,
                state_topic=f"{s.topic_state} partition {p}",
                keys=keys,
            )
            match start:
                case Restored():
                    store = _store(log_p, None)
                    built.ready[p] = Task(
                        partition=p, fold=start.fold, store=store, positions=start.positions
                    )
                case Refold():
                    refolds[p] = start
                case Blocked():
                    built.blocked[p] = start.reason
    planned = time.monotonic()
    folds = {p: Fold(horizon=s.horizon, keys=keys) for p in refolds}
    count = refold(s, folds, refolds, homes)
    for p, how in refolds.items():
        folds[p].journal = Journal()  # what changes from now on (a refold writes its whole state)
        if how.why is not None:
            log.warning("task %d: refolded from its input: %s", p, how.why)
        kept = logs.get(p)
        stale = how.stale if s.durable_state and how.why is not None else None
        store = _store(kept, stale)
        built.ready[p] = Task(partition=p, fold=folds[p], store=store, positions=dict(how.upto))
    for task in built.ready.values():
        task.fold.boards_changed.clear()
        task.ready_at = time.monotonic()
    restored = [logs[p] for p in built.ready if p in logs and p not in refolds]
    log.info(
        "tasks %s ready: %d state records (%d bytes) restored, %d committed events refolded "
        "in %.2f s (offsets %.2f s, state read %.2f s, state decoded %.2f s, refold %.2f s; "
        "process cpu %.2f s)",
        sorted(built.ready),
        sum(found.records for found in restored),
        sum(found.size for found in restored),
        count,
        time.monotonic() - started,
        offsets - started,
        read - offsets,
        planned - read,
        time.monotonic() - planned,
        time.process_time() - cpu,
    )
    return built


def _store(log: changelog.Log | None, stale: frozenset[bytes] | None) -> Store:
    if log is None:
        return Store.restored(None, stale, {}, {})
    return Store.restored(log.found(), stale, log.entries, log.offsets)


class Unsettled(Exception):
    """A state partition does not match the offsets its group committed for a while after a
    fault, as it will once what is pending settles: the build waits for it."""


PATIENCE = 60.0
"""Seconds a build waits for that before it takes the state as it reads."""
_unsettled_since: dict[tuple[str, int], float] = {}


def _settled(
    s: Settings, logs: dict[int, changelog.Log], committed: dict[tuple[str, int], int | None]
) -> None:
    """Raise Unsettled while a task's state and its committed offsets differ in one of two ways
    that end by themselves (docs/BROKER-FAULTS.md):

    - the state ends behind them because a transaction is open on its partition (a worker that
      died or was given up mid-transaction: its records, before the last stable offset, hold
      back those committed after them); the brokers abort it within the transaction timeout;
    - the state is ahead of them: its last transaction is committed, but the offsets it
      committed are not readable yet (their coordinator moved while a broker was paused or cut
      off), though they were written in the same transaction.
    """
    behind, ahead = [], []
    for p, found in logs.items():
        raw = found.entries.get(state.TASK_KEY)
        try:
            position = None if raw is None else state.read_position(raw)
        except state.StateError:
            continue
        at = {"rounds": -1, "bets": -1} if position is None else vars_of(position)
        offsets = {role: committed[(role, p)] for role in ROLES}
        if any((offsets[role] or 0) > at[role] for role in ROLES):
            behind.append(p)
        elif any(o is not None and o < at[role] for role, o in offsets.items()):
            ahead.append(p)
    now = time.monotonic()
    for key in [k for k in _unsettled_since if k[0] == s.topic_state]:
        if key[1] not in behind + ahead:
            del _unsettled_since[key]
    open_ = changelog.open_transactions(s, {p: logs[p].end for p in behind}) if behind else []
    waiting = [
        p
        for p in sorted([*open_, *ahead])
        if now - _unsettled_since.setdefault((s.topic_state, p), now) < PATIENCE
    ]
    if waiting:
        raise Unsettled(
            f"{s.topic_state} partitions {waiting}: the state and the offsets its group committed "
            "differ (a transaction still open there, or the offsets of the last one not readable "
            "yet); waiting for them to settle"
        )


def vars_of(position: state.Position) -> dict[str, int]:
    return {"rounds": position.rounds, "bets": position.bets}


def stable_offsets(
    consumer: Consumer, settings: Settings, partitions: list[int]
) -> dict[tuple[str, int], int | None]:
    """The offsets the group committed for each task's inputs (None: none), once stable."""
    tps = [TopicPartition(topic, p) for p in partitions for topic in settings.inputs]
    role = dict(zip(settings.inputs, ROLES, strict=True))
    deadline = time.monotonic() + STABLE_WAIT
    while True:
        try:
            found = consumer.committed(tps, timeout=TIMEOUT)
        except KafkaException as error:
            cause = error.args[0]
            if cause.code() != KafkaError.UNSTABLE_OFFSET_COMMIT or time.monotonic() > deadline:
                raise
            time.sleep(0.1)
            continue
        unstable = [tp for tp in found if tp.error is not None]
        if not unstable:
            return {
                (role[tp.topic], tp.partition): tp.offset if tp.offset >= 0 else None
                for tp in found
            }
        if time.monotonic() > deadline:
            raise KafkaException(unstable[0].error)
        time.sleep(0.1)


def refold(
    settings: Settings, folds: dict[int, Fold], refolds: dict[int, Refold], homes: Homes
) -> int:
    """Feed the committed events of each task's span to its fold, discarding the records; an
    input of another partition's table was forwarded when it was read, and is left out."""
    kinds = dict(zip(settings.inputs, ROLES, strict=True))
    starts = {(t, p): how.start[kinds[t]] for p, how in refolds.items() for t in settings.inputs}
    ends = {(t, p): how.upto[kinds[t]] for p, how in refolds.items() for t in settings.inputs}
    count = 0

    def feed(topic: str, p: int, run: list[Message]) -> None:
        nonlocal count
        fold, kind = folds[p], kinds[topic]
        for message in run:
            with contextlib.suppress(Elsewhere):
                fold.feed(kind, message.value(), homes=homes, partition=p)
                count += 1

    reader = changelog.reader(settings)
    try:
        changelog.scan(reader, starts, ends, feed)
    finally:
        reader.close()
    return count
