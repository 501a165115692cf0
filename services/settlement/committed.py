"""What a committed transaction leaves behind: each task's store told where its state now ends
(one batch of the task at a time), the metrics, and the logs of where the time went."""

from __future__ import annotations

import logging
import time

from services.settlement.metrics import Metrics
from services.settlement.restore import Task
from services.settlement.transaction import Inflight

log = logging.getLogger("croupier.engine")
LOUD = 1000
"""Transactions with at least this many records out are logged with where their time went."""


def kept(
    inflight: Inflight,
    tasks: dict[int, Task],
    state_ends: dict[int, int | None] | None,
    metrics: Metrics,
    done: float,
) -> None:
    """Keep what a transaction committed, `done` (monotonic) when it was; `state_ends`: where it
    left each task's state partition, None without durable state."""
    metrics.committed(messages_out=inflight.out, seconds=done - inflight.started)
    for p in inflight.partitions:
        task = tasks.get(p)
        if task is None:
            continue
        if state_ends is not None:
            stored(task, state_ends.get(p), inflight.folds[p])
        metrics.pending[p] = task.fold.pending
        if task.ready_at is not None:
            log.info(
                "task %d: first transaction %.2f s after ready: %d records out, fold %.0f ms, "
                "commit %.0f ms",
                p,
                done - task.ready_at,
                inflight.out,
                (inflight.folded - inflight.started) * 1000,
                (done - inflight.folded) * 1000,
            )
            task.ready_at = None
    if inflight.out >= LOUD:
        log.info(
            "tasks %s: %d records out: input waited %.0f ms, fold %.0f ms, commit %.0f ms",
            inflight.partitions,
            inflight.out,
            (started_at(inflight.started) - inflight.newest) * 1000,
            (inflight.folded - inflight.started) * 1000,
            (done - inflight.folded) * 1000,
        )


def started_at(started: float) -> float:
    """The wall-clock time (epoch seconds) of a monotonic `started`, however long ago it was."""
    return time.time() - (time.monotonic() - started)


def stored(task: Task, end: int | None, batches: int = 1) -> None:
    """The task's state changes of `batches` batches are committed, the last before `end`."""
    store = task.store
    if store.committed(end, batches):
        log.info(
            "task %d: whole state written again up to its oldest part (%d live bytes, %d to "
            "read): restores read its state partition from offset %d",
            task.partition,
            store.live,
            store.window,
            store.snapshot,
        )
