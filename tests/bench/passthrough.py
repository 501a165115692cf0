"""Baselines for `make bench-kafka`: copy the floor's inputs (`rounds` and `bets`, the same input
croupier's worker reads) unchanged to a copy topic, each message to the partition it came from.

`faust`: a plain faust-streaming agent over both topics (the framework's per-event path).
`aiokafka`: a hand-written aiokafka consume-and-produce loop committing after each batch, no
transactions.
`librdkafka`: a confluent-kafka (librdkafka) transactional copy loop: one read_committed consumer
without auto commit, one transactional producer; per batch one transaction holding the copies and
the consumer's offsets (send_offsets_to_transaction), as an exactly-once worker would.

Run as `python -m tests.bench.passthrough faust|aiokafka|librdkafka TARGET GROUP SOURCE...`;
CROUPIER_BENCH_COPY_BATCH sets the most messages a batch (5,000).
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile

BATCH = int(os.environ.get("CROUPIER_BENCH_COPY_BATCH", "5000"))


def faust_copy(bootstrap: str, sources: list[str], target: str, group: str) -> None:
    import faust  # type: ignore[import-untyped]

    app = faust.App(
        group,
        broker=f"kafka://{bootstrap}",
        store="memory://",
        web_enabled=False,
        datadir=tempfile.mkdtemp(prefix="faust-bench-"),
        broker_commit_interval=0.5,
        consumer_auto_offset_reset="earliest",
        topic_allow_declare=False,
    )
    inbox = app.topic(*sources, value_serializer="raw", key_serializer="raw")
    outbox = app.topic(target, value_serializer="raw", key_serializer="raw")

    @app.agent(inbox)
    async def copy(stream):  # type: ignore[no-untyped-def]
        async for event in stream.events():
            await outbox.send(key=event.key, value=event.value, partition=event.message.partition)

    worker = faust.Worker(app, loglevel="warning", quiet=True)
    worker.execute_from_commandline()


async def aiokafka_copy(bootstrap: str, sources: list[str], target: str, group: str) -> None:
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer  # type: ignore[import-untyped]

    consumer = AIOKafkaConsumer(
        *sources,
        bootstrap_servers=bootstrap,
        group_id=group,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
    )
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=5)
    await consumer.start()
    await producer.start()
    try:
        while True:
            batch = await consumer.getmany(timeout_ms=200, max_records=BATCH)
            futures = [
                await producer.send(target, value=r.value, key=r.key, partition=tp.partition)
                for tp, records in batch.items()
                for r in records
            ]
            if futures:
                await asyncio.gather(*futures)
                await consumer.commit()
    finally:
        await consumer.stop()
        await producer.stop()


def librdkafka_copy(bootstrap: str, sources: list[str], target: str, group: str) -> None:
    from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition

    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "isolation.level": "read_committed",
            "enable.auto.commit": False,
            "enable.auto.offset.store": False,
            "auto.offset.reset": "earliest",
        }
    )
    producer = Producer(
        {
            "bootstrap.servers": bootstrap,
            "transactional.id": f"{group}-copy",
            "linger.ms": 5,
        }
    )
    producer.init_transactions(30)
    consumer.subscribe(sources)
    produce = producer.produce
    try:
        while True:
            messages = consumer.consume(num_messages=BATCH, timeout=0.2)
            if not messages:
                continue
            producer.begin_transaction()
            ends: dict[tuple[str, int], int] = {}
            for m in messages:
                error = m.error()
                if error is not None:
                    if error.code() == KafkaError._PARTITION_EOF:
                        continue
                    raise KafkaException(error)
                partition = m.partition()
                while True:
                    try:
                        produce(target, m.value(), m.key(), partition)
                        break
                    except BufferError:  # the local queue is full: let deliveries drain it
                        producer.poll(0.05)
                ends[(m.topic(), partition)] = m.offset() + 1
            offsets = [TopicPartition(t, p, o) for (t, p), o in ends.items()]
            producer.send_offsets_to_transaction(offsets, consumer.consumer_group_metadata(), 30)
            producer.commit_transaction(60)
    finally:
        consumer.close()


MODES = ("faust", "aiokafka", "librdkafka")


def main() -> None:
    if len(sys.argv) < 5 or sys.argv[1] not in MODES:
        sys.exit(
            f"usage: python -m tests.bench.passthrough {'|'.join(MODES)} TARGET GROUP SOURCE..."
        )
    mode, target, group, *sources = sys.argv[1:]
    bootstrap = os.environ.get("KAFKA_BOOTSTRAP", "127.0.0.1:9092")
    if mode == "faust":
        sys.argv = [sys.argv[0], "worker"]
        faust_copy(bootstrap, sources, target, group)
    elif mode == "librdkafka":
        librdkafka_copy(bootstrap, sources, target, group)
    else:
        asyncio.run(aiokafka_copy(bootstrap, sources, target, group))


if __name__ == "__main__":
    main()
