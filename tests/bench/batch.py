"""`make bench-batch`: the settlement worker's own work on a batch, without Kafka, against the bare
fold of the same messages.

A generated floor (`TABLES` tables, 4 partitions, rounds of 150 to 250 bets, about `EVENTS`
events) is cut into batches of 5,000 messages as the consumer hands them over; each batch is
split by task and input, as the engine does, and each task's part goes through `batch.fold`: the
misrouted check, the fold, routing and encoding the records, the journal and the state's changes.
Kafka's own calls (consume, produce, commit) are left out: what is timed is the Python thread's
share of the worker. The baseline feeds the same messages to fresh folds (`Fold.feed` alone:
decode, decide, no records encoded, no journal, no state). The two take turns, `ROUNDS` passes
each over the floor with fresh tasks; the best pass of each counts (processor time an event).

    python -m tests.bench.batch     # the figures (benchmarks/results/)
"""

from __future__ import annotations

import os
import time
from typing import Any

from services.settings import Settings
from services.settlement import batch
from services.settlement.fold import Fold
from services.settlement.metrics import Metrics
from services.settlement.misrouted import Homes, table_of
from services.settlement.recovery import ROLES
from services.settlement.restore import Task
from services.settlement.rounds import Journal
from services.settlement.routing import Topics
from services.settlement.store import Store
from services.simulation.streams import CLEAN, Profile, generate
from tests.bench.results import Run, figure
from tests.messages import Message

TABLES = 40
PARTITIONS = 4
EVENTS = int(os.environ.get("CROUPIER_BENCH_BATCH_EVENTS", "300000"))
BATCH = 5_000
ROUNDS = int(os.environ.get("CROUPIER_BENCH_BATCH_ROUNDS", "5"))


def floor(settings: Settings) -> list[Message]:
    """The floor's rounds and bets, each on its table's partition, in the order published."""
    profile = Profile(**{**CLEAN.__dict__, "bets_per_round": (150, 250)})
    homes = Homes(PARTITIONS)
    offsets: dict[tuple[str, int], int] = {}
    messages: list[Message] = []
    seed = 0
    while len(messages) < EVENTS:
        streams = generate(seed, tables=TABLES, rounds=2, profile=profile, first_round=seed * 2)
        for topic, values in (
            (settings.topic_rounds, streams.rounds),
            (settings.topic_bets, streams.bets),
        ):
            for value in values:
                p = homes.of(value) or 0
                offset = offsets.get((topic, p), 0)
                offsets[(topic, p)] = offset + 1
                key = (table_of(value) or "").encode()
                messages.append(Message(topic, p, offset, value, key))
        seed += 1
    return messages


def one_pass(settings: Settings, messages: list[Message]) -> float:
    """Every batch of the floor through fresh tasks' `batch.fold`; processor seconds."""
    topics = Topics.of(settings, PARTITIONS, PARTITIONS)
    kind = dict(zip(settings.inputs, ROLES, strict=True))
    tasks = {}
    for p in range(PARTITIONS):
        fold = Fold(horizon=settings.horizon)
        fold.journal = Journal()
        tasks[p] = Task(
            partition=p, fold=fold, store=Store(end=0), positions=dict.fromkeys(ROLES, 0)
        )
    metrics, homes = Metrics(), Homes(PARTITIONS)
    ends = dict.fromkeys(tasks, 0)
    started = time.process_time()
    for at in range(0, len(messages), BATCH):
        work: dict[int, batch.Inputs] = {}
        for message in messages[at : at + BATCH]:
            inputs = work.setdefault(message.partition(), ([], []))
            inputs[kind[message.topic()] == "bets"].append(message)
        for p, inputs in work.items():
            out: list[Any] = batch.fold(tasks[p], inputs, topics, metrics, True, homes)
            ends[p] += len(out)  # as if committed: the state partition's end moves on
            tasks[p].store.committed(ends[p])
    return time.process_time() - started


def bare_pass(settings: Settings, messages: list[Message]) -> float:
    """The same messages fed to fresh folds, one a partition; processor seconds."""
    kind = dict(zip(settings.inputs, ROLES, strict=True))
    folds = {p: Fold(horizon=settings.horizon) for p in range(PARTITIONS)}
    started = time.process_time()
    for message in messages:
        folds[message.partition()].feed(kind[message.topic()], message.value())
    return time.process_time() - started


def main() -> None:
    run = Run("bench-batch")
    settings = Settings()
    print(f"generating a floor of {TABLES} tables, about {EVENTS:,} events ...", flush=True)
    messages = floor(settings)
    times: dict[str, list[float]] = {"batch": [], "bare": []}
    for turn in range(ROUNDS):
        times["batch"].append(one_pass(settings, messages) / len(messages) * 1e6)
        times["bare"].append(bare_pass(settings, messages) / len(messages) * 1e6)
        print(
            f"  pass {turn + 1}/{ROUNDS}: batch path {times['batch'][-1]:.2f} us an event, "
            f"bare fold {times['bare'][-1]:.2f} us an event",
            flush=True,
        )
    run.save(
        [
            figure(
                "batch_time_an_event",
                f"the worker's batch path without Kafka, processor time an event "
                f"({len(messages):,} events, {PARTITIONS} tasks, batches of {BATCH:,}; best of "
                f"{ROUNDS} passes)",
                min(times["batch"]),
                "us",
                baseline=("the bare fold of the same messages", min(times["bare"])),
            ),
        ]
    )


if __name__ == "__main__":
    main()
