"""On a real broker: the coordinator's log read where Kafka keeps it says what each transaction
became, and a commit marker written the way the worker writes one makes open records readable."""

from __future__ import annotations

import uuid

from confluent_kafka import Consumer, Producer
from confluent_kafka import TopicPartition as Partition
from kafka import KafkaAdminClient, TopicPartition  # type: ignore[import-untyped]
from kafka.admin._transactions import AbortTransactionSpec  # type: ignore[import-untyped]

from services.security import clients
from services.settings import Settings
from services.settlement import dangling, txnlog
from services.settlement.txnlog import Outcome
from tests.kafka import create_topics, isolated_settings


def _producer(settings: Settings, transactional_id: str) -> Producer:
    producer = Producer(
        {"bootstrap.servers": settings.kafka_bootstrap, "transactional.id": transactional_id}
    )
    producer.init_transactions(30)
    return producer


def _write(producer: Producer, topic: str, partition: int, count: int) -> None:
    producer.begin_transaction()
    for i in range(count):
        producer.produce(topic, value=b"r%d" % i, partition=partition)
    producer.flush(30)


def _registered(settings: Settings, transactional_id: str) -> tuple[int, int]:
    admin = KafkaAdminClient(**clients.kafka_python(settings))
    try:
        described = admin.describe_transactions([transactional_id])[transactional_id]
        return described.producer_id, described.producer_epoch
    finally:
        admin.close()


def test_the_coordinators_log_shows_what_each_transaction_became(kafka: str) -> None:
    settings = isolated_settings(kafka)
    create_topics(settings)
    topic = settings.topic_settlements
    options = clients.kafka_python(settings)
    ours = f"{settings.transactional_prefix}-log-{uuid.uuid4().hex[:6]}"

    producer = _producer(settings, ours)
    _write(producer, topic, 1, 3)
    producer.commit_transaction(30)
    pid, epoch = _registered(settings, ours)
    assert txnlog.decide(dangling.read_log(options, ours), pid, epoch, (topic, 1)) is (
        Outcome.COMMIT
    )

    _write(producer, topic, 1, 2)
    producer.abort_transaction(30)
    assert txnlog.decide(dangling.read_log(options, ours), pid, epoch, (topic, 1)) is (
        Outcome.ABORT
    )

    _write(producer, topic, 2, 2)  # left open: the id registers again over it
    _producer(settings, ours)
    entries = dangling.read_log(options, ours)
    assert txnlog.decide(entries, pid, epoch, (topic, 2)) is Outcome.ABORT
    assert txnlog.decide(entries, pid, epoch, (topic, 3)) is Outcome.UNKNOWN


def test_a_commit_marker_makes_open_records_readable_to_a_committed_reader(kafka: str) -> None:
    settings = isolated_settings(kafka)
    create_topics(settings)
    topic = settings.topic_settlements
    producer = _producer(settings, f"{settings.transactional_prefix}-marker")
    _write(producer, topic, 0, 3)

    options = clients.kafka_python(settings)
    markers = dangling.Markers(**options)
    try:
        tp = TopicPartition(topic, 0)
        (active,) = markers.describe_producers([tp])[tp].active_producers
        assert active.current_transaction_start_offset == 0
        markers.commit_transaction(
            AbortTransactionSpec(tp, active.producer_id, active.producer_epoch, -1)
        )
    finally:
        markers.close()

    reader = Consumer(
        {
            "bootstrap.servers": settings.kafka_bootstrap,
            "group.id": f"{settings.group_id}-reader",
            "isolation.level": "read_committed",
            "enable.auto.commit": False,
        }
    )
    try:
        reader.assign([Partition(topic, 0, 0)])
        values = [m.value() for m in reader.consume(10, 10) if m.error() is None]
        assert values == [b"r0", b"r1", b"r2"]
    finally:
        reader.close()
        producer.abort_transaction(30)
