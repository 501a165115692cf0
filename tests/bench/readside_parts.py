"""`make bench-readside-parts`: where the projector's processor time per bet goes, part by part.

Over the messages croupier's workers commit for `CROUPIER_BENCH_PARTS_BETS` bets (default
200,000; `make bench-readside`'s shape: 200 a round, 16 tables, one round of 10,000), each part of
the projection run alone and timed by processor time, so that the figures hold on a busy machine:

1. reading: the journals (and boards) published to a 4-partition topic of the local broker, then
   read back by the projector's consumer (librdkafka, `read_committed`), kept as it keeps them;
2. decoding: `Changes.feed_all` of every message, in batches of 50,000 inputs and decisions, a
   topic's consecutive messages at a time (up to 1,000, a read's), as the projector feeds them;
3. encoding: `Store.prepare`, the batches' rows as binary COPY data;
4. the database: `Store.write` of the batches into a fresh PostgreSQL database, the processor
   time of this process (the writing side) and of the local server's processes;
5. the floor: the same whole rows COPYed into an empty copy of `bets` with no index, with its
   primary key only, and with all its indexes (the local server's processor time per row);
6. COPY's formats: the same whole rows encoded and COPYed as text (the read side's format
   before) and as binary (its format now), alternating, the encoding's and the server's time.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import time
import uuid
from pathlib import Path

import msgspec
import psycopg
from aiokafka import AIOKafkaProducer  # type: ignore[import-untyped]
from confluent_kafka import TopicPartition
from kafka.admin import KafkaAdminClient, NewTopic  # type: ignore[import-untyped]
from psycopg._copy_base import format_row_text
from psycopg.adapt import Transformer
from sqlalchemy import create_engine, make_url, text

from services import reading
from services.history import bulk, pacing, partitions, projector, schema
from services.history.migrate import upgrade
from services.history.projection import Changes, Source
from services.history.store import Prepared, Store, connect
from services.settings import Settings
from tests.bench import readside
from tests.bench.results import Run
from tests.bench.results import figure as saved
from tests.committed import Committed, commit_inputs
from tests.database import fresh_url

ROOT = Path(__file__).resolve().parents[2]
BOOTSTRAP = os.environ.get("KAFKA_BOOTSTRAP", "127.0.0.1:9092")
BETS = int(os.environ.get("CROUPIER_BENCH_PARTS_BETS", "200000"))
BATCH = 50_000
PARTITIONS = 4


def say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def committed(bets: int) -> Committed:
    readside.BETS = bets
    s = Settings()
    inputs = [
        ("rounds" if topic == s.topic_rounds else "bets", raw)
        for topic, _, raw in readside.rounds(s)
    ]
    return commit_inputs(inputs, batch=2000)


def batches(out: Committed) -> list[list[tuple[Source, bytes, int]]]:
    """The messages as the projector reads them in step: by timestamp across topics, cut after
    50,000 inputs and decisions (a journal's each, counted by their `type`)."""
    merged = sorted(
        (
            (ts, n, source, raw)
            for source, msgs in out.topics.items()
            for n, (raw, ts) in enumerate(msgs)
        ),
        key=lambda m: (m[0], m[1]),
    )
    cut: list[list[tuple[Source, bytes, int]]] = [[]]
    size = 0
    for ts, _, source, raw in merged:
        if size >= BATCH:
            cut.append([])
            size = 0
        cut[-1].append((source, raw, ts))
        size += max(1, raw.count(b'"type":') - 1)
    return cut


class Record(msgspec.Struct):
    """What the projector feeds of a Kafka record."""

    value: bytes
    timestamp: int


def _runs(batch: list[tuple[Source, bytes, int]]) -> list[tuple[Source, list[Record]]]:
    """The batch as runs of one topic's consecutive messages, up to 1,000 (one read's)."""
    runs: list[tuple[Source, list[Record]]] = []
    for source, raw, timestamp in batch:
        if not runs or runs[-1][0] != source or len(runs[-1][1]) >= 1000:
            runs.append((source, []))
        runs[-1][1].append(Record(raw, timestamp))
    return runs


async def _read(messages: list[bytes]) -> float:
    """Publish the messages to a new topic, then read them back; processor seconds of the read."""
    topic = f"parts-{uuid.uuid4().hex[:10]}"
    admin = KafkaAdminClient(bootstrap_servers=BOOTSTRAP)
    admin.create_topics([NewTopic(topic, PARTITIONS, 1)])
    admin.close()
    producer = AIOKafkaProducer(bootstrap_servers=BOOTSTRAP, linger_ms=5, max_batch_size=1 << 20)
    await producer.start()
    try:
        for n, raw in enumerate(messages):
            await producer.send(topic, raw, partition=n % PARTITIONS)
        await producer.flush()
    finally:
        await producer.stop()
    settings = Settings(kafka_bootstrap=BOOTSTRAP)
    consumer = partitions.reader(settings, lambda error: say(f"  kafka: {error}"))
    reads = projector.Projector(settings, Store(create_engine("sqlite://")))
    try:
        parts = [(topic, p) for p in range(PARTITIONS)]
        reads.reached = dict.fromkeys(parts, 0)
        consumer.assign([TopicPartition(topic, p, 0) for p in range(PARTITIONS)])
        got, before = 0, time.process_time()
        while got < len(messages):
            got += reads._take(reading.take(consumer, pacing.STEP, 1.0))
            reads.waiting.clear()
        return time.process_time() - before
    finally:
        consumer.close()
        admin = KafkaAdminClient(bootstrap_servers=BOOTSTRAP)
        admin.delete_topics([topic])
        admin.close()


def floor(url: str, prepared: list[Prepared]) -> dict[str, float]:
    """Server processor µs per row of COPYing the whole rows into an empty copy of `bets`."""
    rows = sum(len(p.whole) for p in prepared)
    variants = {
        "no index": "(LIKE bets INCLUDING DEFAULTS)",
        "primary key only": "(LIKE bets INCLUDING DEFAULTS INCLUDING CONSTRAINTS)",
        "all of bets' indexes": "(LIKE bets INCLUDING ALL)",
    }
    found: dict[str, float] = {}
    conninfo = make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(conninfo) as db:
        for name, like in variants.items():
            db.execute("DROP TABLE IF EXISTS floor_bets")
            db.execute(f"CREATE TABLE floor_bets {like}")
            if name == "primary key only":
                db.execute("ALTER TABLE floor_bets ADD PRIMARY KEY (bet_id)")
            db.commit()
            meter = readside.Meter("postgres")
            for p in prepared:
                if p.whole.data:
                    bulk.ship(db, "floor_bets", p.whole.data)
                db.commit()
                meter.sample()
            found[name] = meter.used() / rows * 1e6
        db.execute("DROP TABLE floor_bets")
        db.commit()
    return found


def formats(url: str, prepared: list[Prepared]) -> dict[str, tuple[float, float]]:
    """COPY's text format (the read side's before binary) against its binary one, over the same
    whole rows into a copy of `bets` with all its indexes, alternating, three times each: the
    median µs a row of encoding them in this process and of the local server's processes."""
    batches = [p.whole.rows for p in prepared if p.whole.rows]
    rows = sum(map(len, batches))
    runs: dict[str, list[tuple[float, float]]] = {"text": [], "binary": []}
    conninfo = make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(conninfo) as db:
        texts = Transformer(db)
        binary = bulk.Encoder(db, schema.bets)
        for _ in range(3):
            for name, made in runs.items():
                db.execute("DROP TABLE IF EXISTS floor_bets")
                db.execute("CREATE TABLE floor_bets (LIKE bets INCLUDING ALL)")
                db.commit()
                began = time.process_time()
                data: list[bytes] = []
                for batch in batches:
                    out = bytearray()
                    if name == "text":
                        for row in batch:
                            format_row_text(msgspec.structs.astuple(row), texts, out)
                    else:
                        binary.add(batch, out)
                    data.append(bytes(out))
                encoding = time.process_time() - began
                meter = readside.Meter("postgres")
                for chunk in data:
                    if name == "text":
                        with db.cursor().copy("COPY floor_bets FROM STDIN") as copy:
                            copy.write(chunk)
                    else:
                        bulk.ship(db, "floor_bets", chunk)
                    db.commit()
                    meter.sample()
                made.append((encoding / rows * 1e6, meter.used() / rows * 1e6))
        db.execute("DROP TABLE floor_bets")
        db.commit()
    return {
        name: (statistics.median(e for e, _ in made), statistics.median(s for _, s in made))
        for name, made in runs.items()
    }


def main() -> int:
    run = Run("bench-readside-parts")
    say(f"folding {BETS:,} bets ...")
    out = committed(BETS)
    cut = batches(out)
    bets = out.decisions
    messages = sum(len(b) for b in cut)
    say(f"  {messages:,} messages, {len(cut)} batches")
    say("reading them back from Kafka ...")
    read = asyncio.run(_read([raw for b in cut for _, raw, _ in b]))
    decoding = encoding = writing = 0.0
    with fresh_url("postgresql", ROOT / "test-output") as url:
        engine = connect(url)
        upgrade(engine)
        store = Store(engine)
        prepared: list[Prepared] = []
        meter = readside.Meter("postgres")
        say("decoding, encoding and writing them ...")
        for batch in cut:
            changes = Changes()
            runs = _runs(batch)
            began = time.process_time()
            for source, records in runs:
                changes.feed_all(source, records)
            fed = time.process_time()
            ready = store.prepare(changes)
            made = time.process_time()
            prepared.append(ready)
            writes = time.process_time()
            store.write(ready, {})
            writing += time.process_time() - writes
            meter.sample()
            decoding += fed - began
            encoding += made - fed
        with engine.connect() as db:
            stored = db.execute(text("SELECT count(*) FROM bets")).scalar_one()
        assert stored == bets, (stored, bets)
        server = meter.used()
        engine.dispose()
        say("the floor: COPY alone ...")
        floors = floor(url, prepared)
        say("COPY's text format against binary ...")
        both = formats(url, prepared)
    per = 1e6 / bets
    spent = (read, decoding, encoding, writing, server)  # before the loops below reuse names
    print(f"bets: {bets:,} ({messages:,} messages, {len(cut)} batches of up to {BATCH:,})")
    print("processor time per bet (µs):")
    print(f"  reading (librdkafka, {messages / bets:.2f} records a bet): {read * per:6.1f}")
    print(f"  decoding (Changes.feed_all):            {decoding * per:6.1f}")
    print(f"  encoding (Store.prepare, COPY data):    {encoding * per:6.1f}")
    print(f"  writing (Store.write, this process):    {writing * per:6.1f}")
    print(f"  PostgreSQL (the local server's processes): {server * per:6.1f}")
    whole = sum(len(p.whole) for p in prepared)
    print(f"the floor, PostgreSQL µs per row COPYed ({whole:,} whole rows):")
    for name, figure in floors.items():
        print(f"  {name + ':':<24}{figure:6.1f}")
    print("COPY's formats, µs per row (median of 3, alternating; all of bets' indexes):")
    for name, (encoding, server) in both.items():
        print(f"  {name + ':':<8} encoding {encoding:5.2f}, PostgreSQL {server:5.2f}")
    parts = {
        "reading": f"reading (librdkafka, {messages / bets:.2f} records a bet)",
        "decoding": "decoding into rows (Changes.feed_all)",
        "encoding": "encoding the COPY data (Store.prepare)",
        "writing": "the writing side in the projector's process (Store.write)",
        "postgresql": "PostgreSQL (the local server's processes)",
    }
    of = f"processor time a bet over {bets:,} bets"
    run.save(
        [
            saved(f"part_{key}", f"{label}, {of}", seconds * per, "us/bet")
            for (key, label), seconds in zip(parts.items(), spent, strict=True)
        ]
        + [
            saved(f"copy_floor_{n}", f"COPY alone, {name}", value, "us/row")
            for n, (name, value) in enumerate(floors.items())
        ]
        + [
            saved(
                f"copy_{name}_{side}",
                f"COPY {name} format, {side}, median of 3, alternating",
                value,
                "us/row",
            )
            for name, pair in both.items()
            for side, value in zip(("encoding", "PostgreSQL"), pair, strict=True)
        ]
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
