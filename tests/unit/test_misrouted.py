"""An input read from a partition other than its table's is forwarded there, unchanged, and
decided only there (contract section 1a); the producer's likely mistake is named."""

from __future__ import annotations

import zlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from schemas.records import Rejected
from services.partitioner import crc32_partition, fnv1a_partition, murmur2, partition_of
from services.settlement import batch
from services.settlement.fold import Fold
from services.settlement.metrics import Metrics
from services.settlement.misrouted import ADVICE, Elsewhere, Homes, cause, table_of
from services.settlement.restore import Task
from services.settlement.routing import Topics
from services.settlement.store import Store
from tests.messages import Message
from tests.unit.builders import bet, round_event

JAVA_MURMUR2 = {
    b"21": -973932308,
    b"foobar": -790332482,
    b"a-little-bit-long-string": -985981536,
    b"a-little-bit-longer-string": -1486304829,
    b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8": -58897971,
    b"abc": 479470107,
}
"""The Java client's murmur2 of these keys (Kafka's own test of its Utils.murmur2)."""


def _table_on(partition: int, partitions: int) -> str:
    return next(
        t for n in range(1000) if partition_of((t := f"T{n}").encode(), partitions) == partition
    )


def test_the_partition_is_the_java_clients_murmur2_with_the_sign_bit_cleared() -> None:
    for key, java in JAVA_MURMUR2.items():
        assert partition_of(key, 2**31) == java & 0x7FFFFFFF
        assert partition_of(key, 12) == (java & 0x7FFFFFFF) % 12


def test_the_other_clients_hashes_are_crc32_and_sarama_fnv1a() -> None:
    assert crc32_partition(b"T1", 1000) == zlib.crc32(b"T1") % 1000
    # FNV-1a 32 of "a" is 0xe40c292c, negative as an int32: Sarama takes its absolute value
    assert fnv1a_partition(b"a", 1000) == (2**32 - 0xE40C292C) % 1000
    # of "foobar" 0xbf9cf968, negative too
    assert fnv1a_partition(b"foobar", 7) == (2**32 - 0xBF9CF968) % 7


def test_an_input_belongs_to_the_partition_of_the_table_its_value_names() -> None:
    homes = Homes(4)
    raw = bet(1, table_id="sicbo-07")
    assert homes.of(raw) == homes.home("sicbo-07") == partition_of(b"sicbo-07", 4)


@pytest.mark.parametrize(
    "value",
    [None, b"", b"not json", b"[1, 2]", b'{"table_id": 7}', b'{"type": "bet.placed"}', b"{"],
)
def test_an_input_that_names_no_table_is_rejected_where_it_was_read(value: bytes | None) -> None:
    homes = Homes(4)
    assert homes.of(value) is None
    for p in range(4):
        (record,) = Fold().feed("bets", value, homes=homes, partition=p)
        assert isinstance(record, Rejected)


@pytest.mark.parametrize("topic", ["rounds", "bets"])
def test_the_fold_folds_nothing_of_an_input_of_another_partitions_table(topic: str) -> None:
    table = _table_on(2, 4)
    raw = (
        round_event("opened", table_id=table, game="sicbo")
        if topic == "rounds"
        else bet(1, table_id=table)
    )
    fold = Fold()
    with pytest.raises(Elsewhere) as raised:
        fold.feed(topic, raw, homes=Homes(4), partition=1)
    assert raised.value.home == 2
    assert fold.tables == {} and fold.pending == 0
    assert fold.feed(topic, raw, homes=Homes(4), partition=2) == []  # opened, or waiting for it
    assert table in fold.tables


def test_an_invalid_input_naming_another_partitions_table_is_left_to_that_partition() -> None:
    table = _table_on(3, 4)
    raw = b'{"type": "bet.placed", "table_id": "%s", "stake": "lots"}' % table.encode()
    with pytest.raises(Elsewhere) as raised:
        Fold().feed("bets", raw, homes=Homes(4), partition=0)
    assert raised.value.home == 3
    (record,) = Fold().feed("bets", raw, homes=Homes(4), partition=3)
    assert isinstance(record, Rejected) and record.detail == "v: missing required field"


@given(st.text(min_size=1, max_size=80), st.integers(min_value=1, max_value=64))
def test_any_table_id_has_one_home_among_the_partitions(table_id: str, partitions: int) -> None:
    import msgspec

    raw = msgspec.json.encode({"table_id": table_id, "anything": [1, {"else": None}]})
    assert table_of(raw) == table_id
    home = Homes(partitions).of(raw)
    try:
        expected = partition_of(table_id.encode(), partitions)
    except UnicodeEncodeError:
        assert home is None
    else:
        assert home == expected
        assert 0 <= home < partitions


def test_the_cause_names_the_producers_pattern() -> None:
    n = 16
    table = next(
        t
        for i in range(1000)
        if crc32_partition((t := f"T{i}").encode(), n) != partition_of(t.encode(), n)
        and crc32_partition(t.encode(), n) != fnv1a_partition(t.encode(), n)
    )
    key = table.encode()
    assert cause(table, None, 3, n) == "no key"
    assert cause(table, b"player-9", 3, n) == "key is not the table_id"
    assert cause(table, key, crc32_partition(key, n), n) == "crc32"
    assert cause(table, key, fnv1a_partition(key, n), n) == "fnv-1a"
    other = next(p for p in range(n) if p not in (crc32_partition(key, n), fnv1a_partition(key, n)))
    assert cause(table, key, other, n) == "another partitioner"
    assert "murmur2_random" in ADVICE["crc32"]
    both = next(  # a key both hashes put on one partition
        t
        for i in range(10_000)
        if crc32_partition((t := f"T{i}").encode(), 4) == fnv1a_partition(t.encode(), 4)
    )
    assert cause(both, both.encode(), crc32_partition(both.encode(), 4), 4) in ADVICE


TOPICS = Topics(
    settlements="settlements",
    refunds="refunds",
    adjustments="adjustments",
    rejected="rejected",
    table_stats="table-stats",
    accepted="accepted",
    state="state",
    rejected_partitions=2,
    input_partitions=2,
)


def _inputs(messages: list[Message]) -> batch.Inputs:
    """A task's messages of a batch as the engine hands them over: rounds', then bets'."""
    return (
        [m for m in messages if m.topic() == "rounds"],
        [m for m in messages if m.topic() == "bets"],
    )


def _task(partition: int) -> Task:
    return Task(
        partition=partition,
        fold=Fold(journal=True),
        store=Store(stale=None),
        positions={"rounds": 0, "bets": 0},
    )


def test_a_batch_forwards_another_tables_input_unchanged_and_folds_nothing_of_it() -> None:
    here, there = _table_on(0, 2), _table_on(1, 2)
    task, metrics = _task(0), Metrics()
    headers = [("trace", b"abc")]
    messages = [
        Message("rounds", 0, 0, round_event("opened", "R1", there, game="sicbo"), b"x", headers),
        Message("bets", 0, 0, bet(1, table_id=there), there.encode()),
        Message("rounds", 0, 1, round_event("opened", "R1", here, game="sicbo"), here.encode()),
    ]
    values = [m.value() for m in messages]
    out = batch.fold(task, _inputs(messages), TOPICS, metrics, False, Homes(2))

    forwarded = [m for m in out if m[0] in ("rounds", "bets")]
    assert forwarded == [
        ("rounds", 1, b"x", values[0], headers),
        ("bets", 1, there.encode(), values[1], []),
    ]
    assert task.positions == {"rounds": 2, "bets": 1}
    assert set(task.fold.tables) == {here}
    journal = [m for m in out if m[0] == "accepted"]
    assert len(journal) == 1 and here.encode() in (journal[0][3] or b"")
    assert metrics.misrouted == {("rounds", 0): 1, ("bets", 0): 1}


def test_the_task_of_the_tables_partition_decides_the_forwarded_input() -> None:
    there = _table_on(1, 2)
    task = _task(1)
    messages = [
        Message("rounds", 1, 0, round_event("opened", "R1", there, game="sicbo"), None),
        Message("rounds", 1, 1, round_event("betting_closed", "R1", there, last_seq=1), None),
        Message("rounds", 1, 2, round_event("result", "R1", there, dice=[1, 2, 3]), None),
        Message("bets", 1, 0, bet(1, table_id=there), there.encode()),
    ]
    out = batch.fold(task, _inputs(messages), TOPICS, Metrics(), False, Homes(2))
    assert [m[0] for m in out if m[0] not in ("accepted", "table-stats")] == ["settlements"]


def test_an_input_naming_no_table_is_rejected_where_it_was_read() -> None:
    task, metrics = _task(1), Metrics()
    refused = Message("bets", 1, 0, b"not json", b"k")
    out = batch.fold(task, _inputs([refused]), TOPICS, metrics, False, Homes(2))
    assert [(m[0], m[2]) for m in out if m[0] != "accepted"] == [("rejected", b"k")]
    assert not metrics.misrouted


@given(st.binary(max_size=64))
def test_murmur2_is_kafka_pythons_murmur2(key: bytes) -> None:
    from kafka.partitioner.default import murmur2 as theirs  # type: ignore[import-untyped]

    assert murmur2(key) == theirs(key) & 0xFFFFFFFF
