"""A record as the settlement engine reads it of confluent-kafka's Message, for tests and
benchmarks that feed the engine's batch path without a broker."""

from __future__ import annotations

from dataclasses import dataclass

from confluent_kafka import KafkaError


@dataclass(frozen=True, slots=True)
class Message:
    """What the worker reads of confluent-kafka's Message."""

    _topic: str
    _partition: int
    _offset: int
    _value: bytes | None
    _key: bytes | None = None
    _headers: list[tuple[str, bytes]] | None = None
    _error: KafkaError | None = None

    def error(self) -> KafkaError | None:
        return self._error

    def topic(self) -> str:
        return self._topic

    def partition(self) -> int:
        return self._partition

    def offset(self) -> int:
        return self._offset

    def value(self) -> bytes | None:
        return self._value

    def key(self) -> bytes | None:
        return self._key

    def headers(self) -> list[tuple[str, bytes]] | None:
        return self._headers


def end_of(topic: str, partition: int) -> Message:
    """librdkafka's event of a partition read to its end (enable.partition.eof)."""
    return Message(topic, partition, -1, None, _error=KafkaError(KafkaError._PARTITION_EOF))
