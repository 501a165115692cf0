"""The signed message of contract section 8, and signing and checking it, by worked examples."""

from __future__ import annotations

import base64

import pytest

from schemas.codec import decode_round
from services.signing.message import message
from services.signing.signature import Unverified, Verified, sign, signed, verify, with_sig
from tests.unit.builders import round_event
from tests.unit.signing import KEY_T1, KEY_T1_NEXT, KEY_T2, decoded, resigned, signed_event

AT = "2026-11-29T12:00:00Z"


def test_a_results_message_is_its_values_joined_by_line_feeds_with_the_dice_as_digits() -> None:
    event = decoded(round_event("result", event_id="e1", dice=[6, 5, 1]))
    assert message(event) == f"round.result\n1\ne1\nT1\nR1\n{AT}\n6-5-1\n\n".encode()


def test_discs_are_written_as_r_and_w_in_the_events_order() -> None:
    raw = round_event("result", event_id="e1", discs=["red", "white", "white", "red"])
    assert message(decoded(raw)) == f"round.result\n1\ne1\nT1\nR1\n{AT}\nRWWR\n\n".encode()


def test_the_dice_keep_the_order_the_event_gives_them() -> None:
    raw = round_event("result", event_id="e1", dice=[1, 5, 6])
    assert b"\n1-5-6\n" in message(decoded(raw))


def test_a_corrections_message_has_its_outcome_reason_and_authoriser() -> None:
    raw = round_event(
        "corrected", event_id="e2", dice=[2, 2, 3], reason="misread", authorized_by="ana"
    )
    assert (
        message(decoded(raw))
        == f"round.corrected\n1\ne2\nT1\nR1\n{AT}\n2-2-3\nmisread\nana".encode()
    )


def test_a_voids_message_has_an_empty_outcome() -> None:
    raw = round_event("voided", event_id="e3", reason="shaker broken", authorized_by="bo")
    assert (
        message(decoded(raw)) == f"round.voided\n1\ne3\nT1\nR1\n{AT}\n\nshaker broken\nbo".encode()
    )


def test_a_cancellations_message_has_its_reason_and_no_authoriser() -> None:
    raw = round_event("cancelled", event_id="e4", reason="table closed")
    assert (
        message(decoded(raw)) == f"round.cancelled\n1\ne4\nT1\nR1\n{AT}\n\ntable closed\n".encode()
    )


def test_at_is_written_exactly_as_the_event_spells_it() -> None:
    raw = round_event("result", event_id="e1", dice=[1, 2, 3], at="2026-11-29t13:00:00.50+01:00")
    assert b"\n2026-11-29t13:00:00.50+01:00\n" in message(decoded(raw))


def test_strings_are_signed_as_the_json_denotes_them_escapes_resolved_and_utf8() -> None:
    raw = (
        b'{"type":"round.cancelled","v":1,"event_id":"\\u00e9v\\/1","table_id":"T1",'
        b'"round_id":"R1","at":"2026-11-29T12:00:00Z","reason":"ca\\u00f1a"}'
    )
    assert message(decoded(raw)) == f"round.cancelled\n1\név/1\nT1\nR1\n{AT}\n\ncaña\n".encode()


def test_a_signature_made_over_the_hand_written_message_verifies() -> None:
    raw = round_event("result", event_id="e1", dice=[6, 5, 1])
    by_hand = KEY_T1.sign(f"round.result\n1\ne1\nT1\nR1\n{AT}\n6-5-1\n\n".encode())
    sig = base64.urlsafe_b64encode(by_hand).rstrip(b"=").decode()
    assert sign(KEY_T1, decoded(raw)) == sig
    assert verify((KEY_T1.public_key(),), decoded(with_sig(raw, sig))) == Verified(0)


def test_a_sig_is_86_characters_of_base64url_without_padding() -> None:
    sig = sign(KEY_T1, decoded(round_event("result", dice=[1, 1, 1])))
    assert len(sig) == 86
    assert set(sig) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")


def test_signed_sets_the_sig_of_a_struct_and_with_sig_appends_it_to_the_json_text() -> None:
    raw = round_event("result", dice=[4, 4, 2])
    event = signed(KEY_T1, decoded(raw))
    assert event.sig == sign(KEY_T1, decoded(raw))
    spliced = with_sig(raw + b"\n", event.sig)
    assert spliced == raw[:-1] + b',"sig":"' + event.sig.encode() + b'"}'
    assert decode_round(spliced) == event


def test_an_event_without_sig_is_unverified_as_missing() -> None:
    verdict = verify((KEY_T1.public_key(),), decoded(round_event("result", dice=[1, 2, 3])))
    assert isinstance(verdict, Unverified)
    assert verdict.why == "missing"
    assert verdict.detail.startswith("sig: missing")


@pytest.mark.parametrize(
    "sig",
    [
        5,
        "",
        "abc",
        ["x"],
        {"sig": "x"},
        "A" * 85,
        "A" * 87,
        "A" * 84 + "==",
        "A" * 85 + "=",
        "A" * 85 + "+",
        "A" * 85 + "/",
    ],
)
def test_a_sig_that_is_not_86_base64url_characters_is_undecodable(sig: object) -> None:
    raw = resigned(round_event("result", dice=[1, 2, 3]), sig=sig)
    verdict = verify((KEY_T1.public_key(),), decoded(raw))
    assert isinstance(verdict, Unverified)
    assert verdict.why == "undecodable"


def test_a_padded_copy_of_a_valid_sig_is_undecodable() -> None:
    raw = signed_event("result", dice=[1, 2, 3])
    sig = decoded(raw).sig
    assert isinstance(sig, str)
    verdict = verify((KEY_T1.public_key(),), decoded(resigned(raw, sig=sig + "==")))
    assert isinstance(verdict, Unverified) and verdict.why == "undecodable"


def test_a_sig_of_another_key_is_unverified_as_unknown() -> None:
    raw = signed_event("result", key=KEY_T2, dice=[1, 2, 3])
    verdict = verify((KEY_T1.public_key(),), decoded(raw))
    assert isinstance(verdict, Unverified)
    assert verdict.why == "unknown"
    assert "none of the 1 key of table 'T1'" in verdict.detail


def test_the_keys_of_a_table_are_tried_in_turn() -> None:
    raw = signed_event("result", key=KEY_T1_NEXT, dice=[1, 2, 3])
    keys = (KEY_T1.public_key(), KEY_T1_NEXT.public_key())
    assert verify(keys, decoded(raw)) == Verified(1)
    assert verify(keys[::-1], decoded(raw)) == Verified(0)
