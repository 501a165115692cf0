"""Inputs read from a partition other than their table's (contract section 1a), pure.

A table's inputs belong to partition `murmur2(table_id) % partitions` of their topic. One read
elsewhere is forwarded there, unchanged, in the transaction that consumes it, and decided there;
the task that read it folds nothing of it. The rule is the same for a worker's batch, a task's
refold of its committed input, and `croupier verify` (which skips the original, as the worker
did, and judges the copy). An input whose value names no table (not JSON, no string `table_id`)
is decided where it was read: it is rejected there, as it would be anywhere.
"""

from __future__ import annotations

from typing import Final

import msgspec

from services.partitioner import crc32_partition, fnv1a_partition, partition_of

KNOWN: Final = 100_000
"""Tables whose partition is remembered; past it, each is computed again (bad input may name
ever new tables)."""


class _Address(msgspec.Struct):
    table_id: str


_ADDRESS: Final = msgspec.json.Decoder(_Address)


class Homes:
    """The partition each input belongs to, for input topics of `partitions` partitions."""

    def __init__(self, partitions: int) -> None:
        if partitions < 1:
            raise ValueError("an input topic has at least one partition")
        self.partitions = partitions
        self._known: dict[str, int] = {}
        self.told: set[tuple[str, str]] = set()
        """The (topic, cause) pairs a worker has logged: each is told once."""

    def of(self, value: bytes | None) -> int | None:
        """The partition of the table the input names; None when it names none."""
        table_id = table_of(value)
        return None if table_id is None else self.home(table_id)

    def home(self, table_id: str) -> int | None:
        """The partition of a table's inputs; None for a name no producer could key by."""
        home = self._known.get(table_id)
        if home is None:
            try:
                home = partition_of(table_id.encode(), self.partitions)
            except UnicodeEncodeError:  # a lone surrogate: no producer's key, rejected anyway
                return None
            if len(self._known) < KNOWN:
                self._known[table_id] = home
        return home


class Elsewhere(Exception):
    """An input of a table whose inputs belong to another partition (`home`): the fold that was
    told it read it from `partition` folds nothing of it (`Fold.feed`)."""

    def __init__(self, home: int) -> None:
        super().__init__(home)
        self.home = home


def table_of(value: bytes | None) -> str | None:
    """The `table_id` an input's value names, if it is a JSON object with a string there."""
    if value is None:
        return None
    try:
        return _ADDRESS.decode(value).table_id
    except (msgspec.DecodeError, RecursionError):
        return None


def cause(table_id: str, key: bytes | None, partition: int, partitions: int) -> str:
    """What put an input of `table_id` with this key on `partition`: a short name for the
    producer's pattern (a worker tells each pattern once)."""
    if key is None:
        return "no key"
    if key != table_id.encode(errors="replace"):
        return "key is not the table_id"
    found = [
        name
        for name, hash_ in (("crc32", crc32_partition), ("fnv-1a", fnv1a_partition))
        if hash_(key, partitions) == partition
    ]
    return " or ".join(found) if found else "another partitioner"


ADVICE: Final = {
    "no key": "the producer sends no key: key each input by its table_id and use Kafka's "
    "murmur2 partitioner",
    "key is not the table_id": "the producer keys inputs by something other than the table_id: "
    "key each input by its table_id",
    "crc32": "the producer hashes the key with CRC32, librdkafka's default (confluent-kafka, "
    "node-rdkafka, rdkafka-based clients): set partitioner=murmur2_random",
    "fnv-1a": "the producer hashes the key with FNV-1a, Sarama's default: use a partitioner "
    "compatible with the Java client's murmur2 (or franz-go, whose default is)",
    "crc32 or fnv-1a": "the producer hashes the key with CRC32 (librdkafka's default: set "
    "partitioner=murmur2_random) or FNV-1a (Sarama's default: use a murmur2 partitioner)",
    "another partitioner": "the producer chose the partition itself or uses a partitioner "
    "other than the Java client's murmur2: key each input by its table_id and use murmur2",
}
"""What the producer should change, by cause (docs/CONTRACT.md, section 1a, per client)."""
