"""Kafka's default partition of a key, as its Java client computes it (contract section 1a).

`(murmur2(key) & 0x7fffffff) % partitions`: the partition every producer of `rounds` and `bets`
should choose for a table's inputs (key `table_id`), and the one croupier forwards a misrouted
input to. The other hashes are those that other clients use by default, so that croupier can say
which one put an input elsewhere.
"""

from __future__ import annotations

import struct
import zlib
from typing import Final

_MASK: Final = 0xFFFFFFFF
_M: Final = 0x5BD1E995


def murmur2(key: bytes) -> int:
    """Kafka's murmur2 of a key (its Java client's `Utils.murmur2`), as an unsigned 32-bit int.
    Written here rather than imported from kafka-python, whose package a worker would otherwise
    load on its way to a takeover for this function alone."""
    length = len(key)
    whole = length & ~3
    h = 0x9747B28C ^ length
    for (k,) in struct.iter_unpack("<I", key[:whole]):
        k = (k * _M) & _MASK
        k ^= k >> 24
        h = ((h * _M) & _MASK) ^ ((k * _M) & _MASK)
    if length & 3:
        h = ((h ^ int.from_bytes(key[whole:], "little")) * _M) & _MASK
    h ^= h >> 13
    h = (h * _M) & _MASK
    return h ^ (h >> 15)


def partition_of(key: bytes, partitions: int) -> int:
    """The Java client's partition of a keyed record: murmur2, sign bit cleared."""
    return (murmur2(key) & 0x7FFFFFFF) % partitions


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
