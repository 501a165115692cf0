"""What the transaction coordinator decided, read from its own log (`__transaction_state`).

When a broker skips a transaction's markers (docs/BROKER-FAULTS.md), the records the transaction
wrote to a partition stay open there, and only the coordinator knows whether it was committing or
aborting them: it wrote its decision (PREPARE_COMMIT or PREPARE_ABORT, with the transaction's
partitions) to its log before sending any marker. This module decodes that log (its records are
Kafka's `TransactionLogKey` version 0 and `TransactionLogValue` versions 0 and 1) and answers, for
one partition left open by one producer epoch, what was decided there. Pure: bytes in, answers
out; `dangling` reads the log and writes the marker.
"""

from __future__ import annotations

import enum
import struct
from collections.abc import Iterable
from dataclasses import dataclass

TOPIC = "__transaction_state"


class Status(enum.IntEnum):
    """The coordinator's states, as numbered in its log."""

    EMPTY = 0
    ONGOING = 1
    PREPARE_COMMIT = 2
    PREPARE_ABORT = 3
    COMPLETE_COMMIT = 4
    COMPLETE_ABORT = 5
    DEAD = 6
    PREPARE_EPOCH_FENCE = 7


class Outcome(enum.Enum):
    """What the coordinator decided for a partition's open records."""

    COMMIT = "commit"
    ABORT = "abort"
    UNKNOWN = "unknown"


@dataclass(frozen=True, slots=True)
class Entry:
    """One record of a transactional id's state in the coordinator's log."""

    transactional_id: str
    producer_id: int
    producer_epoch: int
    status: Status
    partitions: frozenset[tuple[str, int]]


def partition_of(transactional_id: str, partitions: int) -> int:
    """The partition of the coordinator's log that holds `transactional_id` (the brokers' rule:
    Java's `String.hashCode`, made non-negative as Kafka's `Utils.abs` does, modulo the count)."""
    code = 0
    units = transactional_id.encode("utf-16-be")
    for i in range(0, len(units), 2):
        code = (31 * code + int.from_bytes(units[i : i + 2], "big")) & 0xFFFFFFFF
    signed = code - (1 << 32) if code >= 1 << 31 else code
    return (0 if signed == -(1 << 31) else abs(signed)) % partitions


def decode(key: bytes | None, value: bytes | None) -> Entry | None:
    """One record of the log as an `Entry`; None for a tombstone or another kind of record."""
    if key is None or value is None or len(key) < 4:
        return None
    (key_version, length) = struct.unpack_from(">hh", key)
    if key_version != 0 or len(key) != 4 + length:
        return None
    transactional_id = key[4:].decode()
    return _value(transactional_id, value)


def decide(
    entries: Iterable[Entry], producer_id: int, epoch: int, partition: tuple[str, int]
) -> Outcome:
    """What the coordinator last decided for the records `producer_id` wrote at `epoch` to
    `partition` and left open there. A decision is a PREPARE_COMMIT or PREPARE_ABORT naming the
    partition, at that epoch or, for the abort the coordinator writes when the transactional id
    registers again over an open transaction, at the next one. UNKNOWN when the log holds no
    decision after the partition was last added to a transaction (compacted away, or lost)."""
    outcome = Outcome.UNKNOWN
    for entry in entries:
        if entry.producer_id != producer_id or partition not in entry.partitions:
            continue
        match entry.status:
            case Status.ONGOING if entry.producer_epoch == epoch:
                outcome = Outcome.UNKNOWN
            case Status.PREPARE_COMMIT if entry.producer_epoch == epoch:
                outcome = Outcome.COMMIT
            case Status.PREPARE_ABORT if entry.producer_epoch in (epoch, epoch + 1):
                outcome = Outcome.ABORT
            case _:
                pass
    return outcome


class _Reader:
    """A cursor over a record value, for its two encodings (version 0 fixed-size lengths,
    version 1 unsigned varints and tagged fields)."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.at = 0

    def fixed(self, form: str) -> int:
        (value,) = struct.unpack_from(form, self.data, self.at)
        self.at += struct.calcsize(form)
        return int(value)

    def varint(self) -> int:
        shift = result = 0
        while True:
            byte = self.data[self.at]
            self.at += 1
            result |= (byte & 0x7F) << shift
            if byte < 0x80:
                return result
            shift += 7

    def count(self, flexible: bool) -> int:
        """An array's or a string's length; -1 for null."""
        return self.varint() - 1 if flexible else self.fixed(">i")

    def string(self, flexible: bool) -> str:
        length = self.varint() - 1 if flexible else self.fixed(">h")
        text = self.data[self.at : self.at + length].decode()
        self.at += length
        return text

    def skip_tags(self) -> None:
        for _ in range(self.varint()):
            self.varint()
            self.at += self.varint()


def _value(transactional_id: str, value: bytes) -> Entry | None:
    reader = _Reader(value)
    version = reader.fixed(">h")
    if version not in (0, 1):
        return None
    flexible = version == 1
    producer_id = reader.fixed(">q")
    epoch = reader.fixed(">h")
    reader.fixed(">i")  # the transaction's timeout
    status = reader.fixed(">b")
    partitions: set[tuple[str, int]] = set()
    for _ in range(max(reader.count(flexible), 0)):
        topic = reader.string(flexible)
        for _ in range(max(reader.count(flexible), 0)):
            partitions.add((topic, reader.fixed(">i")))
        if flexible:
            reader.skip_tags()
    try:
        known = Status(status)
    except ValueError:
        return None
    return Entry(transactional_id, producer_id, epoch, known, frozenset(partitions))
