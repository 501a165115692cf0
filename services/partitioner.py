"""Kafka's default partition of a key, as its Java client computes it (contract section 1a).

`(murmur2(key) & 0x7fffffff) % partitions`: the partition every producer of `rounds` and `bets`
should choose for a table's inputs (key `table_id`), and the one croupier forwards a misrouted
input to. The other hashes are those that other clients use by default, so that croupier can say
which one put an input elsewhere.
"""

from __future__ import annotations

import zlib

from kafka.partitioner.default import murmur2  # type: ignore[import-untyped]


def partition_of(key: bytes, partitions: int) -> int:
    """The Java client's partition of a keyed record: murmur2, sign bit cleared."""
    return int(murmur2(key) & 0x7FFFFFFF) % partitions


def crc32_partition(key: bytes, partitions: int) -> int:
    """librdkafka's `consistent` and `consistent_random` partitioners (its default): CRC32."""
    return zlib.crc32(key) % partitions


def fnv1a_partition(key: bytes, partitions: int) -> int:
    """Sarama's default hash partitioner: FNV-1a (32 bits), as a signed int32, then its
    absolute value modulo the partitions (Go's remainder keeps the sign)."""
    h = 0x811C9DC5
    for byte in key:
        h = ((h ^ byte) * 0x01000193) & 0xFFFFFFFF
    signed = h - (1 << 32) if h & 0x80000000 else h
    return abs(signed) % partitions
