"""Baselines for `make bench-kafka`: copy `bets` to another topic unchanged, two ways.

`faust`: a plain faust-streaming agent (the framework's per-event path).
`aiokafka`: a hand-written aiokafka consume-and-produce loop committing after each batch.
Run as `python -m tests.bench.passthrough faust|aiokafka SOURCE TARGET GROUP`.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile


def faust_copy(bootstrap: str, source: str, target: str, group: str) -> None:
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
    inbox = app.topic(source, value_serializer="raw", key_serializer="raw")
    outbox = app.topic(target, value_serializer="raw", key_serializer="raw")

    @app.agent(inbox)
    async def copy(stream):  # type: ignore[no-untyped-def]
        async for event in stream.events():
            await outbox.send(key=event.key, value=event.value)

    worker = faust.Worker(app, loglevel="warning", quiet=True)
    worker.execute_from_commandline()


async def aiokafka_copy(bootstrap: str, source: str, target: str, group: str) -> None:
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer  # type: ignore[import-untyped]

    consumer = AIOKafkaConsumer(
        source,
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
            batch = await consumer.getmany(timeout_ms=200, max_records=5000)
            futures = [
                await producer.send(target, value=r.value, key=r.key)
                for records in batch.values()
                for r in records
            ]
            if futures:
                await asyncio.gather(*futures)
                await consumer.commit()
    finally:
        await consumer.stop()
        await producer.stop()


def main() -> None:
    mode, source, target, group = sys.argv[1:5]
    bootstrap = os.environ.get("KAFKA_BOOTSTRAP", "127.0.0.1:9092")
    if mode == "faust":
        sys.argv = [sys.argv[0], "worker"]
        faust_copy(bootstrap, source, target, group)
    else:
        asyncio.run(aiokafka_copy(bootstrap, source, target, group))


if __name__ == "__main__":
    main()
