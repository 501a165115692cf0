"""The fold with table keys (contract section 8): a table with keys must sign what moves money."""

from __future__ import annotations

import random
from typing import Any

import msgspec
from hypothesis import given
from hypothesis import strategies as st

from schemas.records import Adjustment, Refund, Rejected, Settlement
from services.settlement.fold import Fold
from services.signing.keys import derived_key
from services.signing.signature import TableKeys, Unverified, verify
from services.simulation.streams import Streams, generate, interleave
from tests.unit.builders import bet, bets, round_event, rounds, run
from tests.unit.signing import (
    KEY_T1,
    KEY_T1_NEXT,
    KEY_T2,
    decoded,
    resigned,
    sign_all,
    signed_event,
)

KEYS: TableKeys = {"T1": (KEY_T1.public_key(),)}


def closed(round_id: str = "R1", table_id: str = "T1", game: str = "sicbo") -> list[bytes]:
    """A round opened with one bet on big (seq 1) and closed."""
    return [
        round_event("opened", round_id, table_id, game=game),
        round_event("betting_closed", round_id, table_id, last_seq=1),
    ]


def open_round(fold: Fold, round_id: str = "R1", table_id: str = "T1") -> None:
    for raw in closed(round_id, table_id):
        assert fold.feed("rounds", raw) == []
    assert fold.feed("bets", bet(1, round_id=round_id, table_id=table_id)) == []


def only_rejection(records: list[Any]) -> Rejected:
    (record,) = records
    assert isinstance(record, Rejected), record
    return record


def test_an_unsigned_result_on_a_table_with_keys_is_rejected_and_pays_nothing() -> None:
    fold = Fold(keys=KEYS)
    open_round(fold)
    raw = round_event("result", dice=[6, 5, 1])
    rejected = only_rejection(fold.feed("rounds", raw))
    assert (rejected.reason, rejected.topic, rejected.raw) == (
        "bad_signature",
        "rounds",
        raw.decode(),
    )
    assert rejected.detail.startswith("sig: missing")
    assert [b.bet_id for b in fold.waiting()] == ["T1-R1-1"]
    (settlement,) = fold.feed("rounds", signed_event("result", dice=[6, 5, 1], event_id="r-2"))
    assert isinstance(settlement, Settlement)
    assert (settlement.result, settlement.payout) == ("win", 200)
    assert list(fold.waiting()) == []


def test_a_rejected_unsigned_result_leaves_the_round_open_to_cancellation() -> None:
    fold = Fold(keys=KEYS)
    open_round(fold)
    only_rejection(fold.feed("rounds", round_event("result", dice=[6, 5, 1])))
    (refund,) = fold.feed("rounds", signed_event("cancelled"))
    assert isinstance(refund, Refund)
    assert (refund.reason, refund.amount) == ("round_cancelled", 100)


def test_a_result_signed_by_another_tables_key_is_rejected() -> None:
    fold = Fold(keys={**KEYS, "T2": (KEY_T2.public_key(),)})
    open_round(fold)
    rejected = only_rejection(
        fold.feed("rounds", signed_event("result", key=KEY_T2, dice=[6, 5, 1]))
    )
    assert rejected.reason == "bad_signature"
    assert "none of the 1 key of table 'T1'" in rejected.detail
    assert len(list(fold.waiting())) == 1


def test_a_result_whose_dice_were_altered_after_signing_is_rejected() -> None:
    fold = Fold(keys=KEYS)
    open_round(fold)
    forged = resigned(signed_event("result", dice=[1, 2, 3]), dice=[6, 5, 6])
    assert only_rejection(fold.feed("rounds", forged)).reason == "bad_signature"
    assert len(list(fold.waiting())) == 1


def test_a_valid_signature_copied_onto_another_round_or_event_id_is_rejected() -> None:
    fold = Fold(keys=KEYS)
    open_round(fold, "R1")
    open_round(fold, "R2")
    genuine = signed_event("result", round_id="R1", dice=[6, 5, 1])
    onto_r2 = resigned(genuine, round_id="R2", event_id="T1/R2/result")
    assert only_rejection(fold.feed("rounds", onto_r2)).reason == "bad_signature"
    fresh_id = resigned(genuine, event_id="another")
    assert only_rejection(fold.feed("rounds", fresh_id)).reason == "bad_signature"
    (settlement,) = fold.feed("rounds", genuine)
    assert isinstance(settlement, Settlement) and settlement.round_id == "R1"
    assert [b.round_id for b in fold.waiting()] == ["R2"]


def test_a_forgery_reusing_an_accepted_event_id_is_rejected_not_ignored_as_a_redelivery() -> None:
    fold = Fold(keys=KEYS)
    open_round(fold)
    genuine = signed_event("result", dice=[6, 5, 1])
    assert len(fold.feed("rounds", genuine)) == 1
    assert fold.feed("rounds", genuine) == []  # a redelivery: ignored
    forged = resigned(genuine, dice=[1, 1, 1])
    assert only_rejection(fold.feed("rounds", forged)).reason == "bad_signature"


def test_a_key_rotated_out_of_the_file_no_longer_signs_while_the_new_key_does() -> None:
    fold = Fold(keys={"T1": (KEY_T1_NEXT.public_key(),)})
    open_round(fold)
    old = signed_event("result", key=KEY_T1, dice=[6, 5, 1])
    assert only_rejection(fold.feed("rounds", old)).reason == "bad_signature"
    new = signed_event("result", key=KEY_T1_NEXT, dice=[6, 5, 1], event_id="r-new")
    (settlement,) = fold.feed("rounds", new)
    assert isinstance(settlement, Settlement)


def test_during_a_rotation_both_keys_of_a_table_sign() -> None:
    fold = Fold(keys={"T1": (KEY_T1.public_key(), KEY_T1_NEXT.public_key())})
    open_round(fold, "R1")
    open_round(fold, "R2")
    old = signed_event("result", "R1", key=KEY_T1, dice=[6, 5, 1])
    new = signed_event("result", "R2", key=KEY_T1_NEXT, dice=[6, 5, 1])
    assert [type(r) for r in fold.feed("rounds", old) + fold.feed("rounds", new)] == [
        Settlement,
        Settlement,
    ]


def test_a_table_without_keys_is_read_as_before_beside_a_table_with_keys() -> None:
    fold = Fold(keys=KEYS)
    open_round(fold, "R1", "T2")
    (settlement,) = fold.feed("rounds", round_event("result", "R1", "T2", dice=[6, 5, 1]))
    assert isinstance(settlement, Settlement) and settlement.table_id == "T2"


def test_a_table_without_keys_ignores_whatever_sig_it_sends() -> None:
    events = [*closed(table_id="T2"), round_event("result", "R1", "T2", dice=[6, 5, 1], sig=5)]
    keyed, plain = Fold(keys=KEYS), Fold()
    messages = [*rounds(*events[:2]), *bets(bet(1, table_id="T2")), *rounds(events[2])]
    assert run(messages, keyed) == run(messages, plain)
    assert [type(r) for r in run(messages, Fold())] == [Settlement]


def test_round_events_that_move_no_money_need_no_signature() -> None:
    fold = Fold(keys=KEYS)
    for raw in [
        round_event("opened", game="sicbo"),
        round_event("suspended"),
        round_event("resumed"),
        round_event("betting_closed", last_seq=0),
        round_event("reshaken"),
    ]:
        assert fold.feed("rounds", raw) == []


def _settled(fold: Fold) -> None:
    open_round(fold)
    (settlement,) = fold.feed("rounds", signed_event("result", dice=[6, 5, 1]))
    assert isinstance(settlement, Settlement) and settlement.payout == 200


def test_an_unsigned_correction_is_rejected_and_a_signed_one_adjusts() -> None:
    fold = Fold(keys=KEYS)
    _settled(fold)
    fields: dict[str, Any] = {"dice": [1, 1, 2], "reason": "misread", "authorized_by": "ana"}
    unsigned = round_event("corrected", **fields)
    assert only_rejection(fold.feed("rounds", unsigned)).reason == "bad_signature"
    (adjustment,) = fold.feed("rounds", signed_event("corrected", event_id="c-2", **fields))
    assert isinstance(adjustment, Adjustment)
    assert (adjustment.n, adjustment.delta) == (1, -200)


def test_an_unsigned_void_is_rejected_and_a_signed_one_pays_the_stake_back() -> None:
    fold = Fold(keys=KEYS)
    _settled(fold)
    fields: dict[str, Any] = {"reason": "shaker broken", "authorized_by": "bo"}
    forged = resigned(signed_event("voided", **fields), authorized_by="mallory")
    assert only_rejection(fold.feed("rounds", forged)).reason == "bad_signature"
    (adjustment,) = fold.feed("rounds", signed_event("voided", **fields))
    assert isinstance(adjustment, Adjustment)
    assert (adjustment.cause, adjustment.payout, adjustment.delta) == ("void", 100, -100)


def test_an_unsigned_cancellation_is_rejected_and_the_bets_keep_waiting() -> None:
    fold = Fold(keys=KEYS)
    open_round(fold)
    rejected = only_rejection(fold.feed("rounds", round_event("cancelled")))
    assert rejected.reason == "bad_signature"
    assert len(list(fold.waiting())) == 1
    forged = resigned(signed_event("cancelled"), reason="another reason")
    assert only_rejection(fold.feed("rounds", forged)).reason == "bad_signature"
    (refund,) = fold.feed("rounds", signed_event("cancelled"))
    assert isinstance(refund, Refund)


def test_the_signature_is_checked_before_the_life_cycle() -> None:
    fold = Fold(keys=KEYS)
    unopened = round_event("result", "R9", dice=[1, 2, 3])
    assert only_rejection(fold.feed("rounds", unopened)).reason == "bad_signature"
    signed = signed_event("result", "R9", dice=[1, 2, 3])
    assert only_rejection(fold.feed("rounds", signed)).reason == "invalid_transition"


def test_a_bet_read_after_a_rejected_result_waits_and_is_settled_by_the_signed_one() -> None:
    fold = Fold(keys=KEYS)
    for raw in closed():
        fold.feed("rounds", raw)
    only_rejection(fold.feed("rounds", round_event("result", dice=[6, 5, 1])))
    assert fold.feed("bets", bet(1)) == []
    (settlement,) = fold.feed("rounds", signed_event("result", dice=[6, 5, 1], event_id="r-2"))
    assert isinstance(settlement, Settlement)


# Any change of any signed field breaks the signature.

TEXT = st.text(
    st.characters(codec="utf-8", exclude_categories=("Cs",), exclude_characters="\x00"),
    min_size=1,
    max_size=12,
)
"""A text an event may hold: any character but NUL (schemas.codec.nul_field)."""
DICE = st.lists(st.integers(1, 6), min_size=3, max_size=3)
DISCS = st.lists(st.sampled_from(["red", "white"]), min_size=4, max_size=4)
AT_VALUES = st.sampled_from(
    [
        "2026-11-29T12:00:00Z",
        "2026-11-29T12:00:00.5Z",
        "2026-11-29T13:00:00+01:00",
        "2026-11-30T00:00:00z",
    ]
)


@st.composite
def signed_cases(draw: st.DrawFn) -> tuple[dict[str, Any], str, Any]:
    """A money-moving event's fields, one of its signed fields and another value for it."""
    kind = draw(st.sampled_from(["result", "corrected", "voided", "cancelled"]))
    body: dict[str, Any] = {
        "type": f"round.{kind}",
        "v": 1,
        "event_id": draw(TEXT),
        "table_id": "T1",
        "round_id": draw(TEXT),
        "at": draw(AT_VALUES),
    }
    outcome = draw(st.sampled_from(["dice", "discs"]))
    if kind in ("result", "corrected"):
        body[outcome] = draw(DICE if outcome == "dice" else DISCS)
    if kind != "result":
        body["reason"] = draw(TEXT)
    if kind in ("corrected", "voided"):
        body["authorized_by"] = draw(TEXT)
    field = draw(st.sampled_from([f for f in body if f not in ("v", "table_id")] + ["type"]))
    if field == "type":
        others = {"corrected": "voided", "voided": "corrected", "result": "corrected"}
        other = others.get(kind, "voided")
        changed: Any = f"round.{other}"
        body.setdefault("reason", "r")
        body.setdefault("authorized_by", "a")
        if other == "corrected" and "dice" not in body and "discs" not in body:
            body["dice"] = [1, 2, 3]
    elif field == "at":
        changed = draw(AT_VALUES.filter(lambda at: at != body["at"]))
    elif field in ("dice", "discs"):
        changed = draw((DICE if field == "dice" else DISCS).filter(lambda o: o != body[field]))
    else:
        changed = draw(TEXT.filter(lambda t: t != body[field]))
    return body, field, changed


@given(signed_cases())
def test_any_change_to_any_signed_field_breaks_the_signature(
    case: tuple[dict[str, Any], str, Any],
) -> None:
    body, field, changed = case
    keys = (KEY_T1.public_key(),)
    raw = signed_event_of(body)
    assert verify(keys, decoded(raw)).__class__.__name__ == "Verified"
    altered = resigned(raw, **{field: changed})
    verdict = verify(keys, decoded(altered))
    assert isinstance(verdict, Unverified) and verdict.why == "unknown"


def signed_event_of(body: dict[str, Any]) -> bytes:
    from services.signing.signature import sign, with_sig

    raw = msgspec.json.encode(body)
    return with_sig(raw, sign(KEY_T1, decoded(raw)))


def test_moving_a_signed_event_to_a_table_sharing_its_key_breaks_the_signature() -> None:
    raw = signed_event("result", dice=[6, 5, 1])
    keys = (KEY_T1.public_key(),)
    assert isinstance(verify(keys, decoded(resigned(raw, table_id="T2"))), Unverified)


def _unsigned(record: Any) -> Any:
    """A record with any `sig` member taken out of the input it carries (a dead letter's raw)."""
    if not isinstance(record, Rejected):
        return record
    try:
        body = msgspec.json.decode(record.raw)
    except msgspec.DecodeError:
        body = None
    if isinstance(body, dict) and "sig" in body:
        body.pop("sig")
        return (record.reason, record.detail, body)
    return (record.reason, record.detail, record.raw)


@given(st.integers(0, 2**32 - 1))
def test_every_table_signing_gives_the_records_of_no_table_signing(seed: int) -> None:
    """Streams with every contract case; each table's money-moving events signed by its key."""
    plain = generate(seed, tables=3, rounds=6)
    signers = {f"T{t:03d}": derived_key("property", f"T{t:03d}") for t in range(3)}
    signed = Streams(rounds=sign_all(plain.rounds, signers), bets=plain.bets)
    keys = {table: (key.public_key(),) for table, key in signers.items()}
    order = random.Random(seed)
    merged = interleave(signed, order)
    merged_plain = interleave(plain, random.Random(seed))
    got = [_unsigned(r) for r in run(merged, Fold(keys=keys))]
    assert got == [_unsigned(r) for r in run(merged_plain, Fold())]
    assert not any(isinstance(r, tuple) and r[0] == "bad_signature" for r in got)
