"""The stream processors on a real broker write exactly what `croupier replay` computes."""

from __future__ import annotations

import random
from collections import Counter

import msgspec
from confluent_kafka import Producer
from kafka import KafkaProducer  # type: ignore[import-untyped]

from schemas.codec import encode
from services.audit.reader import read_topic
from services.audit.verify import audit
from services.partitioner import crc32_partition, partition_of
from services.security import clients
from services.settings import Settings
from services.settlement.fold import Fold
from services.simulation.streams import Profile, Streams, generate, interleave
from tests.kafka import (
    create_topics,
    isolated_settings,
    log_path,
    publish,
    table_of,
    wait_caught_up,
    workers,
)


def _replay(streams: Streams) -> tuple[Counter[bytes], dict[str, bytes]]:
    fold = Fold()
    records = Counter(encode(r) for kind, raw in streams.tagged() for r in fold.feed(kind, raw))
    stats = {t: encode(s) for t in fold.tables if (s := fold.stats(t)) is not None}
    return records, stats


def _committed(settings: Settings) -> tuple[Counter[bytes], dict[str, bytes]]:
    records: Counter[bytes] = Counter()
    for topic in (
        settings.topic_settlements,
        settings.topic_refunds,
        settings.topic_adjustments,
        settings.topic_rejected,
    ):
        records.update(m.value for m in read_topic(settings, topic))
    stats: dict[str, bytes] = {}
    for m in read_topic(settings, settings.topic_table_stats):
        assert m.key is not None
        stats[m.key.decode()] = m.value
    return records, stats


def _ids(records: Counter[bytes]) -> Counter[str]:
    ids: Counter[str] = Counter()
    for raw, n in records.items():
        record = msgspec.json.decode(raw)
        key = record.get("adjustment_id") or record.get("settlement_id") or record.get("refund_id")
        if key:
            ids[key] += n
    return ids


def test_two_workers_write_exactly_the_records_of_the_offline_replay(kafka: str) -> None:
    settings = isolated_settings(kafka, partitions=4)
    create_topics(settings)
    streams = generate(7, tables=12, rounds=8, profile=Profile(bets_per_round=(0, 30)))
    publish(settings, streams, seed=7)
    with workers(settings, 2):
        wait_caught_up(settings)
    records, stats = _committed(settings)
    expected, expected_stats = _replay(streams)
    assert records == expected
    assert stats == expected_stats
    assert max(_ids(records).values()) == 1


def test_a_worker_restarted_mid_stream_continues_without_loss_or_repeat(kafka: str) -> None:
    settings = isolated_settings(kafka, partitions=3)
    create_topics(settings)
    first = generate(11, tables=6, rounds=6)
    second = generate(12, tables=6, rounds=6, first_round=100)
    publish(settings, first, seed=1)
    with workers(settings, 1):
        wait_caught_up(settings)
    publish(settings, second, seed=2)
    with workers(settings, 1, name="again"):
        wait_caught_up(settings)
    records, stats = _committed(settings)
    both = Streams(rounds=first.rounds + second.rounds, bets=first.bets + second.bets)
    expected, expected_stats = _replay(both)
    assert records == expected
    assert stats == expected_stats


def test_records_with_no_value_are_rejected_as_empty_and_stop_nothing(kafka: str) -> None:
    settings = isolated_settings(kafka, partitions=2)
    create_topics(settings)
    streams = generate(11, tables=4, rounds=4, profile=Profile(bets_per_round=(1, 10)))
    producer = KafkaProducer(**clients.kafka_python(settings), acks="all")
    try:  # a tombstone on each input topic, ahead of every event of its table
        for topic in (settings.topic_rounds, settings.topic_bets):
            producer.send(topic, key=b"T000", value=None)
        producer.flush()
    finally:
        producer.close()
    publish(settings, streams, seed=11)
    with workers(settings, 1):
        wait_caught_up(settings)

    records, stats = _committed(settings)
    expected, expected_stats = _replay(streams)
    empty = [encode(r) for topic in ("rounds", "bets") for r in Fold().feed(topic, None)]
    assert [msgspec.json.decode(raw)["reason"] for raw in empty] == ["malformed", "malformed"]
    assert all(b'"raw":""' in raw and b"empty message" in raw for raw in empty)
    assert records == expected + Counter(empty)
    assert stats == expected_stats


def test_bets_published_with_librdkafkas_default_partitioner_are_forwarded_and_settled_once(
    kafka: str,
) -> None:
    """Contract section 1a: a table's round events on their murmur2 partitions (the Java client's)
    and its bets on their CRC32 partitions (librdkafka's default) settle as a replay does, and
    `croupier verify` agrees; the workers say what the producer should change."""
    partitions = 4
    settings = isolated_settings(kafka, partitions=partitions)
    create_topics(settings)
    streams = generate(5, tables=16, rounds=6, profile=Profile(bets_per_round=(0, 20)))
    topics = {"rounds": settings.topic_rounds, "bets": settings.topic_bets}
    producer = KafkaProducer(
        **clients.kafka_python(settings), acks="all", enable_idempotence=True, linger_ms=5
    )
    moved = 0
    try:
        for kind, raw in interleave(streams, random.Random(5)):
            key = table_of(raw)
            partition = None
            if kind == "bets" and key is not None:
                partition = crc32_partition(key, partitions)
                moved += partition != partition_of(key, partitions)
            producer.send(topics[kind], value=raw, key=key, partition=partition)
        producer.flush()
    finally:
        producer.close()
    assert moved > 100  # most tables' bets are on another partition than their rounds

    with workers(settings, 2):
        wait_caught_up(settings)
    records, stats = _committed(settings)
    expected, expected_stats = _replay(streams)
    assert records == expected
    assert stats == expected_stats
    assert max(_ids(records).values()) == 1
    verified = audit(settings)
    assert verified.ok, verified.report
    told = "".join(log_path(settings, f"worker-{n}").read_text() for n in range(2))
    assert "partitioner=murmur2_random" in told and "croupier_misrouted_total" in told


def test_inputs_compressed_by_their_producers_settle_and_verify_reads_them(kafka: str) -> None:
    """Producers may compress their batches with any codec Kafka has (Java clients often use lz4
    or zstd, franz-go snappy): the workers, `croupier verify` and the archive read them all."""
    settings = isolated_settings(kafka, partitions=2)
    create_topics(settings)
    streams = generate(9, tables=8, rounds=4, profile=Profile(bets_per_round=(1, 15)))
    topics = {"rounds": settings.topic_rounds, "bets": settings.topic_bets}
    codecs = {
        ("rounds", 0): "zstd",
        ("rounds", 1): "lz4",
        ("bets", 0): "snappy",
        ("bets", 1): "gzip",
    }
    producers = {
        place: Producer(
            {
                **clients.librdkafka(settings),
                "compression.type": codec,
                "partitioner": "murmur2_random",
                "enable.idempotence": True,
                "linger.ms": 5,
            }
        )
        for place, codec in codecs.items()
    }
    for kind, raw in interleave(streams, random.Random(9)):
        key = table_of(raw)
        producers[(kind, (key or b"0")[-1] % 2)].produce(topics[kind], value=raw, key=key)
    for producer in producers.values():
        assert producer.flush(30) == 0

    with workers(settings, 1):
        wait_caught_up(settings)
    records, stats = _committed(settings)
    expected, expected_stats = _replay(streams)
    assert records == expected
    assert stats == expected_stats
    verified = audit(settings)
    assert verified.ok, verified.report
    assert verified.events_in == len(streams.rounds) + len(streams.bets)
