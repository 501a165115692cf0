"""A scan of committed records hands each partition's records in offset order, a run of one
partition at a time, from its start to just before its end, and no further: whatever a batch
interleaves, a partition's end (or an end-of-partition event) closes it, and a broker's error
stops the scan."""

from __future__ import annotations

from typing import Any

import pytest
from confluent_kafka import KafkaError, KafkaException, TopicPartition
from hypothesis import given
from hypothesis import strategies as st

from services.settlement import changelog
from tests.messages import Message, end_of


class Consumer:
    """Hands over prepared batches, as `reading.take` gets them."""

    def __init__(self, batches: list[list[Message]]) -> None:
        self.batches = batches
        self.assigned: list[TopicPartition] = []

    def assign(self, partitions: list[TopicPartition]) -> None:
        self.assigned = partitions

    def unassign(self) -> None:
        self.assigned = []

    def poll(self, timeout: float) -> Message | None:
        return self.batches[0].pop(0) if self.batches and self.batches[0] else None

    def consume(self, num_messages: int, timeout: float) -> list[Message]:
        batch, self.batches = (self.batches[0], self.batches[1:]) if self.batches else ([], [])
        return batch


def _scan(batches: list[list[Message]], ends: dict[tuple[str, int], int]) -> list[Any]:
    runs: list[Any] = []
    starts = dict.fromkeys(ends, 0)
    consumer: Any = Consumer(batches)
    changelog.scan(
        consumer, starts, ends, lambda t, p, run: runs.append((t, p, [m.offset() for m in run]))
    )
    assert consumer.assigned == []
    return runs


def test_interleaved_partitions_come_as_runs_in_offset_order_up_to_their_ends() -> None:
    a = [Message("s", 0, n, b"a%d" % n) for n in range(5)]
    b = [Message("s", 1, n, b"b%d" % n) for n in range(3)]
    batches = [[a[0], a[1], b[0], a[2]], [b[1], b[2], a[3], a[4]]]
    runs = _scan(batches, {("s", 0): 4, ("s", 1): 3})
    assert runs == [("s", 0, [0, 1]), ("s", 1, [0]), ("s", 0, [2]), ("s", 1, [1, 2]), ("s", 0, [3])]


def test_an_end_of_partition_event_closes_the_partition() -> None:
    batches = [[Message("s", 0, 0, b"x"), end_of("s", 0), Message("s", 1, 0, b"y")]]
    assert _scan(batches, {("s", 0): 9, ("s", 1): 1}) == [("s", 0, [0]), ("s", 1, [0])]


def test_a_brokers_error_stops_the_scan() -> None:
    failing = Message("s", 0, -1, None, _error=KafkaError(KafkaError._TRANSPORT))
    with pytest.raises(KafkaException):
        _scan([[Message("s", 0, 0, b"x"), failing]], {("s", 0): 5})


@given(st.lists(st.integers(min_value=0, max_value=2), max_size=40), st.integers(1, 6))
def test_every_record_below_its_end_is_handed_once_in_order(picks: list[int], size: int) -> None:
    counts = [0, 0, 0]
    flat: list[Message] = []
    for p in picks:
        flat.append(Message("s", p, counts[p], b"v"))
        counts[p] += 1
    ends = {("s", p): max(1, counts[p] - 1) for p in range(3)}
    flat += [end_of("s", p) for p in range(3)]
    batches = [flat[i : i + size] for i in range(0, len(flat), size)]
    seen: dict[int, list[int]] = {0: [], 1: [], 2: []}
    for _, p, offsets in _scan(batches, ends):
        seen[p] += offsets
    assert seen == {p: list(range(min(counts[p], ends[("s", p)]))) for p in range(3)}
