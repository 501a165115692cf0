"""A transaction's journal cut into records: everything once, in order, each record bounded."""

from __future__ import annotations

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from schemas.codec import encode
from schemas.events import BetPlaced
from schemas.journal import Journal, records
from tests.unit.builders import refund_record, settlement_record

AT = "2026-11-01T00:00:00Z"


def bet(n: int, padding: int = 0) -> bytes:
    """A bet.placed as upstream may send it: its own spacing, an unknown field."""
    return (
        f'{{ "type": "bet.placed", "v": 1, "event_id": "e{n}", "table_id": "T1", '
        f'"round_id": "T1-R1", "at": "{AT}", "bet_id": "b{n}", "player_id": "P{n % 3}", '
        f'"seq": {n}, "kind": "big", "stake": {100 + n}, "currency": "EUR", '
        f'"note": "{"x" * padding}" }}'
    ).encode()


def settlement(n: int) -> bytes:
    return settlement_record(n, player_id=f"P{n % 3}", at=AT)


def refund(n: int) -> bytes:
    return refund_record(n, "late_bet", at=AT)


def read(made: list[bytes]) -> list[Journal]:
    return [msgspec.json.decode(raw, type=Journal) for raw in made]


def test_a_journal_holds_the_inputs_then_the_decisions_as_they_were() -> None:
    [made] = records([bet(1), bet(2)], [settlement(1), refund(2)])
    [journal] = read([made])
    assert [e.bet_id for e in journal.inputs if isinstance(e, BetPlaced)] == ["b1", "b2"]
    assert [type(d).__name__ for d in journal.decisions] == ["Settlement", "Refund"]
    assert [encode(d) for d in journal.decisions] == [settlement(1), refund(2)]
    assert bet(1) in made  # the input verbatim, its spacing and unknown field included


def test_a_transaction_with_nothing_accepted_or_decided_writes_no_journal() -> None:
    assert records([], []) == []


def test_an_input_bigger_than_the_limit_goes_alone_in_its_record() -> None:
    big = bet(2, padding=5_000)
    made = records([bet(1), big, bet(3)], [settlement(1)], limit=2_000)
    assert [[e.bet_id for e in j.inputs if isinstance(e, BetPlaced)] for j in read(made)] == [
        ["b1"],
        ["b2"],
        ["b3"],
    ]
    assert len(made[1]) > 2_000 >= max(len(made[0]), len(made[2]))


@given(
    st.lists(st.integers(0, 400), max_size=40),
    st.lists(st.booleans(), max_size=40),
    st.integers(300, 5_000),
)
@settings(max_examples=200)
def test_every_input_and_decision_is_in_one_record_in_order_and_records_stay_under_the_limit(
    paddings: list[int], kinds: list[bool], limit: int
) -> None:
    inputs = [bet(n, padding) for n, padding in enumerate(paddings, start=1)]
    decisions = [settlement(n) if settled else refund(n) for n, settled in enumerate(kinds, 1)]
    made = records(inputs, decisions, limit=limit)
    journals = read(made)
    assert [i for j in journals for i in j.inputs] == [
        msgspec.json.decode(raw, type=BetPlaced) for raw in inputs
    ]
    assert [encode(d) for j in journals for d in j.decisions] == decisions
    for raw, journal in zip(made, journals, strict=True):
        assert journal.inputs or journal.decisions
        assert len(raw) <= limit or len(journal.inputs) + len(journal.decisions) == 1
    # the decisions come after every input: no record holds an input after a decision
    seen_decision = False
    for journal in journals:
        assert not (seen_decision and journal.inputs)
        seen_decision = seen_decision or bool(journal.decisions)
