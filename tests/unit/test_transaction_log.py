"""The coordinator's log read as the brokers write it: its partition for a transactional id, its
records in both value versions, and what it decided for a partition left open."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from services.settlement import txnlog
from services.settlement.txnlog import Entry, Outcome, Status

ID = "croupier-settlement-worker-0"
LEFT = ("settlements", 1)
OTHER = ("accepted", 0)


def _varint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def key(transactional_id: str) -> bytes:
    raw = transactional_id.encode()
    return struct.pack(">hh", 0, len(raw)) + raw


def value(
    version: int, pid: int, epoch: int, status: int, partitions: dict[str, list[int]]
) -> bytes:
    """A TransactionLogValue as Kafka encodes it: version 0 with fixed-size lengths, version 1
    with compact lengths and tagged fields (one tagged field set, as Kafka 4 writes)."""
    head = struct.pack(">hqhib", version, pid, epoch, 60_000, status)
    if version == 0:
        body = struct.pack(">i", len(partitions))
        for topic, ids in partitions.items():
            raw = topic.encode()
            body += struct.pack(">h", len(raw)) + raw + struct.pack(">i", len(ids))
            body += b"".join(struct.pack(">i", i) for i in ids)
        return head + body + struct.pack(">qq", 1_700_000_000_000, 1_699_999_999_000)
    body = _varint(len(partitions) + 1)
    for topic, ids in partitions.items():
        raw = topic.encode()
        body += _varint(len(raw) + 1) + raw + _varint(len(ids) + 1)
        body += b"".join(struct.pack(">i", i) for i in ids) + _varint(0)
    tags = _varint(1) + _varint(2) + _varint(2) + struct.pack(">h", 0)  # ClientTransactionVersion
    return head + body + struct.pack(">qq", 1_700_000_000_000, 1_699_999_999_000) + tags


@pytest.mark.parametrize(
    ("transactional_id", "java_hash_code"),
    [("hello", 99162322), ("abc", 96354), ("", 0), ("croupier-settlement-vm-32314", None)],
)
def test_a_transactional_id_lives_where_javas_hash_code_puts_it(
    transactional_id: str, java_hash_code: int | None
) -> None:
    if java_hash_code is not None:
        assert txnlog.partition_of(transactional_id, 50) == java_hash_code % 50
    assert 0 <= txnlog.partition_of(transactional_id, 50) < 50


def test_the_one_hash_code_without_an_absolute_value_goes_to_partition_zero() -> None:
    # "polygenelubricants".hashCode() is Integer.MIN_VALUE; Kafka's Utils.abs maps it to 0.
    assert txnlog.partition_of("polygenelubricants", 50) == 0
    assert txnlog.partition_of("polygenelubricants", 7) == 0


@pytest.mark.parametrize("version", [0, 1])
def test_both_value_versions_decode_to_the_same_entry(version: int) -> None:
    raw = value(version, 9, 2, 2, {"settlements": [0, 3], "accepted": [1]})
    assert txnlog.decode(key(ID), raw) == Entry(
        ID,
        9,
        2,
        Status.PREPARE_COMMIT,
        frozenset({("settlements", 0), ("settlements", 3), ("accepted", 1)}),
    )


@given(
    version=st.sampled_from([0, 1]),
    pid=st.integers(0, 2**63 - 1),
    epoch=st.integers(0, 2**15 - 1),
    status=st.sampled_from(list(Status)),
    partitions=st.dictionaries(
        st.text(st.characters(codec="utf-8"), min_size=1, max_size=300),
        st.lists(st.integers(0, 2**31 - 1), max_size=5, unique=True),
        max_size=4,
    ),
    transactional_id=st.text(min_size=1, max_size=60),
)
def test_any_record_decodes_to_what_was_encoded(
    version: int,
    pid: int,
    epoch: int,
    status: Status,
    partitions: dict[str, list[int]],
    transactional_id: str,
) -> None:
    entry = txnlog.decode(key(transactional_id), value(version, pid, epoch, status, partitions))
    named = frozenset((t, p) for t, ids in partitions.items() for p in ids)
    assert entry == Entry(transactional_id, pid, epoch, status, named)


def test_tombstones_and_other_records_are_not_entries() -> None:
    assert txnlog.decode(key(ID), None) is None
    assert txnlog.decode(None, value(0, 1, 0, 1, {})) is None
    assert txnlog.decode(struct.pack(">hh", 1, 2) + b"ab", value(0, 1, 0, 1, {})) is None
    assert txnlog.decode(key(ID), struct.pack(">h", 2) + value(0, 1, 0, 1, {})[2:]) is None


def entry(pid: int, epoch: int, status: Status, *partitions: tuple[str, int]) -> Entry:
    return Entry(ID, pid, epoch, status, frozenset(partitions))


def test_a_commit_prepared_before_its_markers_were_skipped_is_a_commit() -> None:
    # The case found in make chaos: PREPARE_COMMIT written, the broker restarted, its markers
    # skipped, and COMPLETE_COMMIT (which names no partition) written or lost.
    log = [
        entry(9, 0, Status.ONGOING, LEFT, OTHER),
        entry(9, 0, Status.PREPARE_COMMIT, LEFT, OTHER),
        entry(9, 0, Status.COMPLETE_COMMIT),
        entry(9, 2, Status.EMPTY),
    ]
    assert txnlog.decide(log, 9, 0, LEFT) is Outcome.COMMIT


def test_an_open_transaction_aborted_when_the_id_registered_again_is_an_abort() -> None:
    # Registration over an ongoing transaction: the coordinator aborts it at the next epoch.
    log = [
        entry(9, 0, Status.ONGOING, LEFT),
        entry(9, 1, Status.PREPARE_ABORT, LEFT),
        entry(9, 1, Status.COMPLETE_ABORT),
        entry(9, 2, Status.EMPTY),
    ]
    assert txnlog.decide(log, 9, 0, LEFT) is Outcome.ABORT


def test_the_last_decision_naming_the_partition_is_the_one() -> None:
    log = [
        entry(9, 0, Status.PREPARE_ABORT, LEFT),
        entry(9, 0, Status.PREPARE_COMMIT, LEFT),
        entry(9, 0, Status.PREPARE_ABORT, OTHER),  # a later transaction that did not write there
    ]
    assert txnlog.decide(log, 9, 0, LEFT) is Outcome.COMMIT
    assert txnlog.decide(log, 9, 0, OTHER) is Outcome.ABORT


def test_without_a_decision_after_the_partition_was_added_the_outcome_is_unknown() -> None:
    assert txnlog.decide([], 9, 0, LEFT) is Outcome.UNKNOWN
    added_again = [entry(9, 0, Status.PREPARE_COMMIT, LEFT), entry(9, 0, Status.ONGOING, LEFT)]
    assert txnlog.decide(added_again, 9, 0, LEFT) is Outcome.UNKNOWN


def test_other_producers_and_other_epochs_decide_nothing() -> None:
    log = [
        entry(8, 0, Status.PREPARE_COMMIT, LEFT),
        entry(9, 1, Status.PREPARE_COMMIT, LEFT),  # a later epoch's own commit
        entry(9, 3, Status.PREPARE_ABORT, LEFT),  # two epochs on
    ]
    assert txnlog.decide(log, 9, 0, LEFT) is Outcome.UNKNOWN
