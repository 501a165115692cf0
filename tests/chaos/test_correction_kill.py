"""kill -9 of the worker that is writing the adjustments of a corrected 10,000-bet round."""

from __future__ import annotations

import time

import msgspec
from kafka import KafkaConsumer  # type: ignore[import-untyped]

from schemas.records import Adjustment
from services.partitioner import partition_of
from services.settlement.fold import Fold
from tests.chaos.audit import check
from tests.chaos.cluster import (
    Feeder,
    Watermarks,
    cluster,
    say,
    wait_committed,
)
from tests.chaos.conftest import Broker
from tests.chaos.streams import BIG, big_round, tables
from tests.kafka import create_topics, isolated_settings


def _correction(result: bytes) -> bytes:
    """A supervisor's correction of a result to an outcome that changes most payouts."""
    event = msgspec.json.decode(result)
    dice = [1, 1, 2] if sum(event["dice"]) >= 11 else [6, 6, 5]
    return msgspec.json.encode(
        {
            **event,
            "type": "round.corrected",
            "event_id": event["event_id"] + "-corrected",
            "dice": dice,
            "reason": "dealer misread the dice",
            "authorized_by": "supervisor-chaos",
        }
    )


def _expected(head: list[tuple[str, bytes]], result: list[tuple[str, bytes]]) -> set[str]:
    """The adjustment ids the offline fold writes for the corrected round."""
    fold = Fold()
    ids: set[str] = set()
    for kind, raw in [*head, *result, ("rounds", _correction(result[0][1]))]:
        ids |= {r.adjustment_id for r in fold.feed(kind, raw) if isinstance(r, Adjustment)}
    return ids


def _adjustment_ids(bootstrap: str, topic: str, marker: bytes) -> list[str]:
    consumer = KafkaConsumer(
        topic,
        bootstrap_servers=bootstrap,
        group_id=None,
        auto_offset_reset="earliest",
        isolation_level="read_committed",
        consumer_timeout_ms=5000,
    )
    try:
        return [
            msgspec.json.decode(m.value)["adjustment_id"] for m in consumer if marker in m.value
        ]
    finally:
        consumer.close()


def test_a_worker_killed_while_writing_a_corrections_adjustments_writes_each_once(
    broker: Broker,
) -> None:
    started = time.monotonic()
    settings = isolated_settings(broker.bootstrap, partitions=4, session_timeout_ms=6000)
    create_topics(settings)
    background = tables(7, tables=8, rounds=12)
    with cluster(settings, "correction") as workers:
        workers.keep(2)
        feeder = Feeder(settings, background, rate=len(background) / 30).start()
        head, result = big_round(99, "CORR")
        partition = partition_of(b"CORR", settings.partitions)
        feeder.publish(head + result)
        wait_committed(settings, partition)
        owner = workers.owner(partition)
        marks = Watermarks(settings, settings.topic_adjustments)
        try:
            with feeder.quiet():
                before = marks.total()
                feeder.publish([("rounds", _correction(result[0][1]))])
                delay = marks.wait_above(before)
                workers.kill(owner)
        finally:
            marks.close()
        workers.keep(2)
        say(f"correction: owner {owner.name} killed {delay:.2f} s after the correction")
        feeder.finish()
        figures = check(
            "kill -9 during a correction", workers, feeder.sent, started, note=f"{BIG} bets"
        )
        ids = _adjustment_ids(broker.bootstrap, settings.topic_adjustments, b'"round_id":"CORR-')
        expected = _expected(head, result)
        assert len(ids) == len(set(ids)) == len(expected) > 1000
        assert set(ids) == expected
        say(f"correction: {len(ids)} adjustments, each once; {figures.line()}")
