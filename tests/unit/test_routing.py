"""Each record of the fold goes to its topic under the key its readers need, and an input
without a key is rejected to the partition of the task that read it."""

from __future__ import annotations

from collections import Counter

from hypothesis import given
from hypothesis import strategies as st

from schemas.codec import Invalid, encode, encode_each, rejected
from schemas.records import Record, Settlement
from services.settlement.fold import Fold
from services.settlement.routing import Topics, count, route
from tests.unit.builders import bet, rounds, run, sicbo_round

TOPICS = Topics(
    settlements="s",
    refunds="r",
    adjustments="a",
    rejected="x",
    table_stats="t",
    accepted="j",
    state="z",
    rejected_partitions=3,
    input_partitions=4,
)


def _decisions() -> list[Settlement]:
    fold = Fold()
    records = run(
        [*rounds(*sicbo_round([1, 2, 3], last_seq=2)), ("bets", bet(1)), ("bets", bet(2))], fold
    )
    return [r for r in records if isinstance(r, Settlement)]


def test_a_settlement_is_keyed_by_its_player_and_partitioned_by_that_key() -> None:
    settlement = _decisions()[0]
    topic, partition, key, value, headers = route(settlement, encode(settlement), TOPICS, 1, b"T1")
    assert (topic, partition, key, headers) == ("s", None, settlement.player_id.encode(), None)
    assert value == encode(settlement)


def test_a_rejection_keeps_its_inputs_key_or_goes_to_its_tasks_partition_without_one() -> None:
    refused = rejected(Invalid(reason="malformed", detail="not JSON"), "bets", b"{")
    assert route(refused, b"", TOPICS, 4, b"T9")[:3] == ("x", None, b"T9")
    assert route(refused, b"", TOPICS, 4, None)[:3] == ("x", 1, None)


def test_table_statistics_are_keyed_by_table() -> None:
    fold = Fold()
    run(rounds(*sicbo_round([6, 6, 6], last_seq=0)), fold)
    stats = fold.stats("T1")
    assert stats is not None
    assert route(stats, b"", TOPICS, 0, None)[:3] == ("t", None, b"T1")


def test_decisions_are_counted_by_kind_and_rejections_by_reason() -> None:
    decisions: Counter[str] = Counter()
    rejections: Counter[str] = Counter()
    refused = rejected(Invalid(reason="malformed", detail="not JSON"), "bets", b"{")
    count([*_decisions(), refused], decisions, rejections)
    assert decisions == Counter({"settlement": 2})
    assert rejections == Counter({"malformed": 1})


@given(st.lists(st.sampled_from(range(4)), max_size=12))
def test_the_records_encoded_at_once_are_each_records_own_encoding(picks: list[int]) -> None:
    settlements = _decisions()
    refused = rejected(Invalid(reason="malformed", detail='a\nb\r"c\u2028'), "bets", b"{\n}")
    fold = Fold()
    run(rounds(*sicbo_round([6, 6, 6], last_seq=0)), fold)
    stats = fold.stats("T1")
    assert stats is not None
    kinds: list[Record] = [settlements[0], settlements[1], refused, stats]
    records = [kinds[n] for n in picks]
    assert encode_each(records) == [encode(record) for record in records]
