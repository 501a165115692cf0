"""Every kind of bad input is classified with the contract's reason code, and nothing raises."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime
from typing import Annotated, Any, get_args, get_origin, get_type_hints

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from schemas.codec import Invalid, decode_bet, decode_event, decode_round
from schemas.events import (
    BetPlaced,
    BettingClosed,
    Event,
    RoundCancelled,
    RoundCorrected,
    RoundOpened,
    RoundReshaken,
    RoundResult,
    RoundResumed,
    RoundSuspended,
    RoundVoided,
)

AT = "2026-11-29T12:00:00Z"
DECODER_CODES = {"malformed", "unknown_type", "unsupported_version", "invalid_field"}


def at_of(cls: type[Event], text: str) -> Any:
    """`at` as the Struct holds it: verbatim text, or a datetime where the Struct parses it."""
    hint = get_type_hints(cls, include_extras=True)["at"]
    kind = get_args(hint)[0] if get_origin(hint) is Annotated else hint
    return datetime.fromisoformat(text) if kind is datetime else text


def _event(type_: str, **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "type": type_,
        "v": 1,
        "event_id": f"evt-{type_}",
        "table_id": "T1",
        "round_id": "R1",
        "at": AT,
    }
    return body | extra


OPENED = _event("round.opened", game="sicbo")
STAFFED = _event("round.opened", game="sicbo", dealer_id="Nguyễn Văn An #3", shaker_id="bowl 7")
CLOSED = _event("round.betting_closed", last_seq=3)
SUSPENDED = _event("round.suspended", reason="shoe jammed")
RESUMED = _event("round.resumed")
RESHAKEN = _event("round.reshaken", reason="die not flat")
RESULT_DICE = _event("round.result", dice=[4, 4, 2])
RESULT_DISCS = _event("round.result", discs=["red", "white", "red", "red"])
CANCELLED = _event("round.cancelled", reason="table closed")
CORRECTED = _event("round.corrected", dice=[4, 4, 3], reason="misread die", authorized_by="sup-7")
VOIDED = _event("round.voided", reason="shaker fault on video", authorized_by="sup-7")
BET = _event(
    "bet.placed",
    bet_id="B1",
    player_id="alice",
    seq=1,
    kind="single",
    pick=[4],
    stake=250,
    currency="EUR",
)

# Valid events with the Struct each decodes to; the JSON Schema test checks them too.
EXAMPLES: list[tuple[dict[str, Any], Event]] = [
    (
        OPENED,
        RoundOpened(
            v=1, event_id="evt-round.opened", table_id="T1", round_id="R1", at=AT, game="sicbo"
        ),
    ),
    (
        _event("round.opened", game="thai-hilo"),
        RoundOpened(
            v=1, event_id="evt-round.opened", table_id="T1", round_id="R1", at=AT, game="thai-hilo"
        ),
    ),
    (
        _event("round.opened", game="xocdia"),
        RoundOpened(
            v=1, event_id="evt-round.opened", table_id="T1", round_id="R1", at=AT, game="xocdia"
        ),
    ),
    (
        CLOSED,
        BettingClosed(
            v=1,
            event_id="evt-round.betting_closed",
            table_id="T1",
            round_id="R1",
            at=AT,
            last_seq=3,
        ),
    ),
    (
        _event("round.betting_closed", last_seq=0),
        BettingClosed(
            v=1,
            event_id="evt-round.betting_closed",
            table_id="T1",
            round_id="R1",
            at=AT,
            last_seq=0,
        ),
    ),
    (
        SUSPENDED,
        RoundSuspended(
            v=1,
            event_id="evt-round.suspended",
            table_id="T1",
            round_id="R1",
            at=AT,
            reason="shoe jammed",
        ),
    ),
    (
        RESUMED,
        RoundResumed(v=1, event_id="evt-round.resumed", table_id="T1", round_id="R1", at=AT),
    ),
    (
        RESHAKEN,
        RoundReshaken(
            v=1,
            event_id="evt-round.reshaken",
            table_id="T1",
            round_id="R1",
            at=AT,
            reason="die not flat",
        ),
    ),
    (
        RESULT_DICE,
        RoundResult(
            v=1, event_id="evt-round.result", table_id="T1", round_id="R1", at=AT, dice=(4, 4, 2)
        ),
    ),
    (
        RESULT_DISCS,
        RoundResult(
            v=1,
            event_id="evt-round.result",
            table_id="T1",
            round_id="R1",
            at=AT,
            discs=("red", "white", "red", "red"),
        ),
    ),
    (
        CANCELLED,
        RoundCancelled(
            v=1,
            event_id="evt-round.cancelled",
            table_id="T1",
            round_id="R1",
            at=AT,
            reason="table closed",
        ),
    ),
    (
        CORRECTED,
        RoundCorrected(
            v=1,
            event_id="evt-round.corrected",
            table_id="T1",
            round_id="R1",
            at=AT,
            dice=(4, 4, 3),
            reason="misread die",
            authorized_by="sup-7",
        ),
    ),
    (
        VOIDED,
        RoundVoided(
            v=1,
            event_id="evt-round.voided",
            table_id="T1",
            round_id="R1",
            at=AT,
            reason="shaker fault on video",
            authorized_by="sup-7",
        ),
    ),
    (
        BET,
        BetPlaced(
            v=1,
            event_id="evt-bet.placed",
            table_id="T1",
            round_id="R1",
            at=at_of(BetPlaced, AT),
            bet_id="B1",
            player_id="alice",
            seq=1,
            kind="single",
            pick=(4,),
            stake=250,
            currency="EUR",
        ),
    ),
    (
        _event("round.opened", game="sicbo", at="2026-11-29T13:00:00.123+01:00"),
        RoundOpened(
            v=1,
            event_id="evt-round.opened",
            table_id="T1",
            round_id="R1",
            at="2026-11-29T13:00:00.123+01:00",
            game="sicbo",
        ),
    ),
    (
        STAFFED,
        RoundOpened(
            v=1,
            event_id="evt-round.opened",
            table_id="T1",
            round_id="R1",
            at=AT,
            game="sicbo",
            dealer_id="Nguyễn Văn An #3",
            shaker_id="bowl 7",
        ),
    ),
    (
        OPENED | {"dealer_id": None, "shaker_id": None},
        RoundOpened(
            v=1, event_id="evt-round.opened", table_id="T1", round_id="R1", at=AT, game="sicbo"
        ),
    ),
    (
        OPENED | {"dealer_id": "D" * 64, "shaker_id": "~"},
        RoundOpened(
            v=1,
            event_id="evt-round.opened",
            table_id="T1",
            round_id="R1",
            at=AT,
            game="sicbo",
            dealer_id="D" * 64,
            shaker_id="~",
        ),
    ),
    (
        BET | {"at": "2026-11-29T13:00:00.5+01:00"},
        BetPlaced(
            v=1,
            event_id="evt-bet.placed",
            table_id="T1",
            round_id="R1",
            at=at_of(BetPlaced, "2026-11-29T13:00:00.5+01:00"),
            bet_id="B1",
            player_id="alice",
            seq=1,
            kind="single",
            pick=(4,),
            stake=250,
            currency="EUR",
        ),
    ),
    (
        BET | {"stake": 2**53 - 1, "seq": 10**6, "currency": "THB", "kind": "big", "pick": []},
        BetPlaced(
            v=1,
            event_id="evt-bet.placed",
            table_id="T1",
            round_id="R1",
            at=at_of(BetPlaced, AT),
            bet_id="B1",
            player_id="alice",
            seq=10**6,
            kind="big",
            pick=(),
            stake=2**53 - 1,
            currency="THB",
        ),
    ),
]


def expected_of(body: dict[str, Any]) -> Event:
    return next(struct for example, struct in EXAMPLES if example is body)


REQUIRED = {
    "round.opened": (OPENED, ["event_id", "table_id", "round_id", "at", "game"]),
    "round.betting_closed": (CLOSED, ["event_id", "table_id", "round_id", "at", "last_seq"]),
    "round.suspended": (SUSPENDED, ["event_id", "table_id", "round_id", "at", "reason"]),
    "round.resumed": (RESUMED, ["event_id", "table_id", "round_id", "at"]),
    "round.reshaken": (RESHAKEN, ["event_id", "table_id", "round_id", "at", "reason"]),
    "round.result": (RESULT_DICE, ["event_id", "table_id", "round_id", "at"]),
    "round.cancelled": (CANCELLED, ["event_id", "table_id", "round_id", "at", "reason"]),
    "round.corrected": (
        CORRECTED,
        ["event_id", "table_id", "round_id", "at", "reason", "authorized_by"],
    ),
    "round.voided": (VOIDED, ["event_id", "table_id", "round_id", "at", "reason", "authorized_by"]),
    "bet.placed": (
        BET,
        [
            "event_id",
            "table_id",
            "round_id",
            "at",
            "bet_id",
            "player_id",
            "seq",
            "kind",
            "stake",
            "currency",
        ],
    ),
}
STRING_FIELDS = {"event_id", "table_id", "round_id", "at", "game", "reason", "authorized_by"}
STRING_FIELDS |= {"bet_id", "player_id", "kind", "currency"}
INTEGER_FIELDS = {"last_seq", "seq", "stake"}
WRONG_TYPES: dict[str, list[Any]] = {
    "string": [42, 1.5, True, None, ["x"], {"x": 1}],
    "integer": ["1", 1.5, 2.0, True, None, [1], {"n": 1}],
    "dice": ["442", 442, {"0": 4}, [4, 4, "2"], [4.0, 4, 2], [True, 1, 1]],
    "discs": ["rwrr", 4, ["red", "white", "red", 1], [None, "red", "red", "red"]],
    "pick": [4, "4", {"0": 4}, ["4"], [4.5], [True], [[4]]],
}

# (event, field, bad value) for values of the right JSON type outside the contract's range.
OUT_OF_RANGE: list[tuple[dict[str, Any], str, Any]] = [
    (BET, "stake", 0),
    (BET, "stake", -1),
    (BET, "stake", 2**53),
    (BET, "stake", 2**64),
    (BET, "seq", 0),
    (BET, "seq", -5),
    (CLOSED, "last_seq", -1),
    (RESULT_DICE, "dice", [4, 4, 7]),
    (RESULT_DICE, "dice", [0, 4, 2]),
    (RESULT_DICE, "dice", [4, 2]),
    (RESULT_DICE, "dice", [4, 4, 2, 1]),
    (RESULT_DICE, "dice", []),
    (RESULT_DISCS, "discs", ["red", "white", "blue", "red"]),
    (RESULT_DISCS, "discs", ["red", "white", "red"]),
    (RESULT_DISCS, "discs", ["red", "white", "red", "red", "red"]),
    (RESULT_DISCS, "discs", ["RED", "white", "red", "red"]),
    (BET, "currency", "eur"),
    (BET, "currency", "EURO"),
    (BET, "currency", "EU"),
    (BET, "currency", ""),
    (BET, "currency", "E1R"),
    *(
        (body, "at", at)
        for body in (OPENED, BET)
        for at in (
            "2026-11-29T12:00:00",
            "2026-11-29",
            "yesterday",
            "",
            "2026-13-01T12:00:00Z",
            "2026-11-29T25:00:00Z",
            "29/11/2026 12:00:00Z",
            "2026-11-29T12:00Z",
        )
    ),
    (OPENED, "at", "2026-11-29T12:00:00+0100"),
    (BET, "currency", "EUR\n"),
    (BET, "currency", "\u00c9UR"),
    (OPENED, "game", "roulette"),
    (OPENED, "game", "SICBO"),
    (OPENED, "game", ""),
    (OPENED, "event_id", ""),
    (OPENED, "table_id", ""),
    (OPENED, "round_id", ""),
    (BET, "bet_id", ""),
    (BET, "player_id", ""),
    *(
        (STAFFED, field, value)
        for field in ("dealer_id", "shaker_id")
        for value in ("", "D" * 65, "D\t3", "D3\n", "\u200bD3", "D\u202e3", "\u0000", "\u0085")
    ),
]


def encoded(body: object) -> bytes:
    return json.dumps(body).encode()


def without(body: dict[str, Any], field: str) -> dict[str, Any]:
    return {name: value for name, value in body.items() if name != field}


def topic_of(body: dict[str, Any]) -> str:
    return "bets" if body["type"] == "bet.placed" else "rounds"


def invalid(raw: bytes, topic: str) -> Invalid:
    """The Invalid the topic's decoder gives; `decode_event` must agree on topic and reason."""
    result = decode_bet(raw) if topic == "bets" else decode_round(raw)
    assert isinstance(result, Invalid), result
    assert decode_event(raw) == (topic, result)
    return result


def assert_names(result: Invalid, field: str) -> None:
    assert result.reason == "invalid_field", result
    assert result.detail.startswith(f"{field}:"), result.detail


# Not an event at all.

DECODERS: dict[str, Callable[[bytes], object]] = {
    "decode_round": decode_round,
    "decode_bet": decode_bet,
    "decode_event": lambda raw: decode_event(raw)[1],
}
NOT_JSON = {
    "text": b"hello",
    "truncated object": encoded(OPENED)[:-1],
    "truncated string": b'{"type": "round.op',
    "empty bytes": b"",
    "whitespace only": b"  \n",
    "invalid utf-8": b'{"type": "round.opened", "event_id": "\xff\xfe"}',
    "invalid utf-8 alone": b"\xc3\x28",
    "byte order mark": b"\xef\xbb\xbf" + encoded(OPENED),
    "trailing garbage": encoded(OPENED) + b"}",
    "two objects": encoded(OPENED) + encoded(OPENED),
    "single quotes": b"{'type': 'round.opened'}",
    "NaN": b'{"type": "bet.placed", "stake": NaN}',
    "number out of range": b'{"type": "bet.placed", "stake": 1e400}',
    "lone surrogate escape": b'{"type": "bet.placed", "bet_id": "\\ud800"}',
}
NOT_AN_OBJECT = {
    "array": b"[]",
    "array of an event": b"[" + encoded(OPENED) + b"]",
    "number": b"42",
    "float": b"4.2",
    "string": b'"round.opened"',
    "null": b"null",
    "boolean": b"true",
}


@pytest.mark.parametrize("raw", NOT_JSON.values(), ids=NOT_JSON.keys())
@pytest.mark.parametrize("decode", DECODERS.values(), ids=DECODERS.keys())
def test_input_that_is_not_json_is_malformed(decode: Callable[[bytes], object], raw: bytes) -> None:
    result = decode(raw)
    assert isinstance(result, Invalid)
    assert result.reason == "malformed"
    assert result.detail


@pytest.mark.parametrize("raw", NOT_AN_OBJECT.values(), ids=NOT_AN_OBJECT.keys())
@pytest.mark.parametrize("decode", DECODERS.values(), ids=DECODERS.keys())
def test_json_that_is_not_an_object_is_malformed(
    decode: Callable[[bytes], object], raw: bytes
) -> None:
    result = decode(raw)
    assert isinstance(result, Invalid)
    assert result.reason == "malformed"
    assert "object" in result.detail


def test_input_that_cannot_be_read_at_all_is_taken_to_be_from_rounds() -> None:
    assert decode_event(b"\xff") == ("rounds", decode_round(b"\xff"))
    assert decode_event(b"[]")[0] == "rounds"


# The envelope: type and v.


@pytest.mark.parametrize(
    ("decode", "body"),
    [
        (decode_round, OPENED),
        (decode_round, BET),
        (decode_bet, OPENED),
        (decode_bet, BET),
        (DECODERS["decode_event"], OPENED),
        (DECODERS["decode_event"], BET),
    ],
    ids=["round-rounds", "bet-rounds", "round-bets", "bet-bets", "round-any", "bet-any"],
)
def test_an_event_without_type_is_an_invalid_field_named_type(
    decode: Callable[[bytes], object], body: dict[str, Any]
) -> None:
    result = decode(encoded(without(body, "type")))
    assert isinstance(result, Invalid)
    assert_names(result, "type")


@pytest.mark.parametrize("kind", [None, 1, 1.5, True, ["round.opened"], {"t": "round.opened"}])
def test_a_type_that_is_not_a_string_is_an_invalid_field_named_type(kind: object) -> None:
    for body in (OPENED, BET):
        for decode in DECODERS.values():
            result = decode(encoded(body | {"type": kind}))
            assert isinstance(result, Invalid)
            assert_names(result, "type")


@pytest.mark.parametrize(
    "kind", ["round.started", "round", "ROUND.OPENED", "BET.PLACED", "", "round.opened "]
)
def test_an_unknown_round_type_is_unknown_type(kind: str) -> None:
    result = invalid(encoded(OPENED | {"type": kind}), "rounds")
    assert result.reason == "unknown_type"
    assert repr(kind) in result.detail


@pytest.mark.parametrize("kind", ["bet.cancelled", "bet.", "bet.placed.v2"])
def test_an_unknown_bet_type_is_unknown_type_from_bets(kind: str) -> None:
    result = invalid(encoded(BET | {"type": kind}), "bets")
    assert result.reason == "unknown_type"
    assert repr(kind) in result.detail


def test_a_bet_on_the_rounds_decoder_is_unknown_type() -> None:
    result = decode_round(encoded(BET))
    assert isinstance(result, Invalid)
    assert result.reason == "unknown_type"
    assert "'bet.placed'" in result.detail


@pytest.mark.parametrize("body", [OPENED, RESULT_DICE, CANCELLED], ids=lambda b: b["type"])
def test_a_round_event_on_the_bets_decoder_is_unknown_type(body: dict[str, Any]) -> None:
    result = decode_bet(encoded(body))
    assert isinstance(result, Invalid)
    assert result.reason == "unknown_type"
    assert repr(body["type"]) in result.detail


@pytest.mark.parametrize("body", [OPENED, BET], ids=["round", "bet"])
def test_an_event_without_v_is_an_invalid_field_named_v(body: dict[str, Any]) -> None:
    assert_names(invalid(encoded(without(body, "v")), topic_of(body)), "v")


@pytest.mark.parametrize("version", ["1", True, False, 1.0, 1.5, None, [1], {"v": 1}])
@pytest.mark.parametrize("body", [OPENED, BET], ids=["round", "bet"])
def test_a_v_that_is_not_an_integer_is_an_invalid_field_named_v(
    body: dict[str, Any], version: object
) -> None:
    assert_names(invalid(encoded(body | {"v": version}), topic_of(body)), "v")


@pytest.mark.parametrize("version", [2, 0, -1, 10**30])
@pytest.mark.parametrize("body", [OPENED, BET], ids=["round", "bet"])
def test_a_v_other_than_1_is_an_unsupported_version(body: dict[str, Any], version: int) -> None:
    result = invalid(encoded(body | {"v": version}), topic_of(body))
    assert result.reason == "unsupported_version"
    assert str(version) in result.detail


def test_an_unknown_type_is_reported_before_a_bad_version() -> None:
    result = invalid(encoded(OPENED | {"type": "round.started", "v": 2}), "rounds")
    assert result.reason == "unknown_type"


def test_a_version_2_event_is_unsupported_even_when_its_fields_are_bad() -> None:
    result = invalid(encoded(BET | {"v": 2, "stake": 0}), "bets")
    assert result.reason == "unsupported_version"


# Each field of each event.

MISSING = [(type_, field) for type_, (_, fields) in REQUIRED.items() for field in fields]


@pytest.mark.parametrize(("type_", "field"), MISSING, ids=[f"{t}-{f}" for t, f in MISSING])
def test_a_missing_required_field_is_an_invalid_field_named_after_it(
    type_: str, field: str
) -> None:
    body = REQUIRED[type_][0]
    assert_names(invalid(encoded(without(body, field)), topic_of(body)), field)


def _wrong_types() -> list[tuple[dict[str, Any], str, Any]]:
    cases = []
    for body, fields in REQUIRED.values():
        for field in [*fields, *(["reason"] if "reason" in body else [])]:
            group = "string" if field in STRING_FIELDS else "integer"
            cases += [(body, field, value) for value in WRONG_TYPES[group]]
    cases += [(RESULT_DICE, "dice", value) for value in WRONG_TYPES["dice"]]
    cases += [(RESULT_DISCS, "discs", value) for value in WRONG_TYPES["discs"]]
    cases += [(BET, "pick", value) for value in WRONG_TYPES["pick"]]
    return cases


WRONG_TYPE = _wrong_types()


@pytest.mark.parametrize(
    ("body", "field", "value"),
    WRONG_TYPE,
    ids=[f"{b['type']}-{f}-{json.dumps(v)}" for b, f, v in WRONG_TYPE],
)
def test_a_field_of_the_wrong_type_is_an_invalid_field_named_after_it(
    body: dict[str, Any], field: str, value: object
) -> None:
    assert_names(invalid(encoded(body | {field: value}), topic_of(body)), field)


@pytest.mark.parametrize(
    ("body", "field", "value"),
    OUT_OF_RANGE,
    ids=[f"{b['type']}-{f}-{json.dumps(v)}" for b, f, v in OUT_OF_RANGE],
)
def test_a_field_out_of_its_range_is_an_invalid_field_named_after_it(
    body: dict[str, Any], field: str, value: object
) -> None:
    assert_names(invalid(encoded(body | {field: value}), topic_of(body)), field)


def test_a_stake_of_zero_is_an_invalid_field_named_stake() -> None:
    assert_names(invalid(encoded(BET | {"stake": 0}), "bets"), "stake")


def test_a_stake_of_2_to_the_53_is_an_invalid_field_named_stake() -> None:
    assert_names(invalid(encoded(BET | {"stake": 2**53}), "bets"), "stake")


def test_a_seq_of_zero_is_an_invalid_field_named_seq() -> None:
    assert_names(invalid(encoded(BET | {"seq": 0}), "bets"), "seq")


def test_a_last_seq_of_minus_one_is_an_invalid_field_named_last_seq() -> None:
    assert_names(invalid(encoded(CLOSED | {"last_seq": -1}), "rounds"), "last_seq")


def test_a_seq_past_a_32_bit_integer_is_an_invalid_field_named_seq() -> None:
    assert_names(invalid(encoded(BET | {"seq": 2**31}), "bets"), "seq")
    assert_names(invalid(encoded(BET | {"seq": 2**70}), "bets"), "seq")
    assert isinstance(decode_bet(encoded(BET | {"seq": 2**31 - 1})), BetPlaced)


def test_a_last_seq_past_a_32_bit_integer_is_an_invalid_field_named_last_seq() -> None:
    assert_names(invalid(encoded(CLOSED | {"last_seq": 2**31}), "rounds"), "last_seq")
    assert isinstance(decode_round(encoded(CLOSED | {"last_seq": 2**31 - 1})), BettingClosed)


def test_a_die_showing_7_is_an_invalid_field_named_dice() -> None:
    assert_names(invalid(encoded(RESULT_DICE | {"dice": [1, 2, 7]}), "rounds"), "dice")


def test_two_dice_are_an_invalid_field_named_dice() -> None:
    assert_names(invalid(encoded(RESULT_DICE | {"dice": [1, 2]}), "rounds"), "dice")


def test_a_blue_disc_is_an_invalid_field_named_discs() -> None:
    bad = ["red", "blue", "red", "white"]
    assert_names(invalid(encoded(RESULT_DISCS | {"discs": bad}), "rounds"), "discs")


@pytest.mark.parametrize("currency", ["eur", "EURO"])
def test_a_currency_not_of_three_capital_letters_is_an_invalid_field_named_currency(
    currency: str,
) -> None:
    assert_names(invalid(encoded(BET | {"currency": currency}), "bets"), "currency")


def test_a_timestamp_without_zone_is_an_invalid_field_named_at() -> None:
    assert_names(invalid(encoded(BET | {"at": "2026-11-29T12:00:00"}), "bets"), "at")


def test_a_timestamp_that_is_not_a_date_is_an_invalid_field_named_at() -> None:
    assert_names(invalid(encoded(OPENED | {"at": "next tuesday"}), "rounds"), "at")


def test_roulette_is_an_invalid_field_named_game() -> None:
    assert_names(invalid(encoded(OPENED | {"game": "roulette"}), "rounds"), "game")


def test_a_pick_that_is_not_a_list_is_an_invalid_field_named_pick() -> None:
    assert_names(invalid(encoded(BET | {"pick": 4}), "bets"), "pick")


def test_a_pick_of_strings_is_an_invalid_field_named_pick() -> None:
    assert_names(invalid(encoded(BET | {"pick": ["4"]}), "bets"), "pick")


@pytest.mark.parametrize("field", ["event_id", "table_id", "round_id", "bet_id", "player_id"])
def test_an_empty_id_is_an_invalid_field_named_after_it(field: str) -> None:
    assert_names(invalid(encoded(BET | {field: ""}), "bets"), field)


@pytest.mark.parametrize("value", [42, 1.5, True, ["D3"], {"id": "D3"}])
@pytest.mark.parametrize("field", ["dealer_id", "shaker_id"])
def test_a_dealer_or_shaker_id_that_is_not_a_string_is_an_invalid_field_named_after_it(
    field: str, value: object
) -> None:
    assert_names(invalid(encoded(STAFFED | {field: value}), "rounds"), field)


def test_an_invisible_character_in_a_dealer_id_is_named_with_its_code_point() -> None:
    result = invalid(encoded(STAFFED | {"dealer_id": "D\u200b3"}), "rounds")
    assert result.detail == (
        "dealer_id: expected 1 to 64 printable characters, found U+200B at character 2 "
        "(a control, separator or invisible formatting character)"
    )


def test_a_round_opened_without_dealer_or_shaker_encodes_without_them() -> None:
    decoded = decode_round(encoded(OPENED))
    assert isinstance(decoded, RoundOpened)
    assert b"dealer_id" not in msgspec.json.encode(decoded)
    assert b"shaker_id" not in msgspec.json.encode(decoded)


def _outcome_named(result: Invalid) -> None:
    assert result.reason == "invalid_field"
    named = result.detail.split(":", 1)[0]
    assert "dice" in named
    assert "discs" in named


def test_a_result_with_both_dice_and_discs_is_an_invalid_field_naming_both() -> None:
    both = RESULT_DICE | {"discs": ["red", "red", "red", "red"]}
    _outcome_named(invalid(encoded(both), "rounds"))


def test_a_result_with_neither_dice_nor_discs_is_an_invalid_field_naming_both() -> None:
    _outcome_named(invalid(encoded(without(RESULT_DICE, "dice")), "rounds"))


def test_a_result_with_null_dice_and_no_discs_is_an_invalid_field_naming_both() -> None:
    _outcome_named(invalid(encoded(RESULT_DICE | {"dice": None}), "rounds"))


# Timestamps RFC 3339 does not allow, and nesting too deep to decode.

BAD_TIMESTAMPS = [
    pytest.param(OPENED, "at", AT + "\n", id="round-at-trailing-newline"),
    pytest.param(
        OPENED, "at", "\u0662\u0660\u0662\u0666-11-29T12:00:00Z", id="round-at-arabic-digits"
    ),
    pytest.param(OPENED, "at", "2026-02-31T12:00:00Z", id="round-at-31-february"),
    pytest.param(BET, "at", "2026-02-31T12:00:00Z", id="bet-at-31-february"),
    pytest.param(OPENED, "at", "2026-02-29T12:00:00Z", id="round-at-29-february-2026"),
    pytest.param(OPENED, "at", "2100-02-29T12:00:00Z", id="round-at-29-february-2100"),
    pytest.param(OPENED, "at", "2026-04-31T12:00:00Z", id="round-at-31-april"),
    pytest.param(OPENED, "at", "2026-11-00T12:00:00Z", id="round-at-day-0"),
]


@pytest.mark.parametrize(("body", "field", "value"), BAD_TIMESTAMPS)
def test_a_timestamp_rfc_3339_does_not_allow_is_an_invalid_field_named_at(
    body: dict[str, Any], field: str, value: str
) -> None:
    assert_names(invalid(encoded(body | {field: value}), topic_of(body)), field)


@pytest.mark.parametrize(
    "at",
    [
        "2026-01-31T12:00:00Z",
        "2026-02-28T12:00:00Z",
        "2028-02-29T12:00:00Z",
        "2000-02-29T12:00:00Z",
        "2026-04-30T12:00:00Z",
        "2026-12-31T23:59:59.999+07:00",
    ],
)
def test_the_last_day_of_each_month_is_a_valid_round_timestamp(at: str) -> None:
    decoded = decode_round(encoded(OPENED | {"at": at}))
    assert not isinstance(decoded, Invalid)
    assert decoded.at == at


@pytest.mark.parametrize("decode", DECODERS.values(), ids=DECODERS.keys())
def test_deeply_nested_json_is_malformed_and_does_not_raise(
    decode: Callable[[bytes], object],
) -> None:
    result = decode(b"[" * 100_000)
    assert isinstance(result, Invalid)
    assert result.reason == "malformed"


def test_a_deeply_nested_unknown_extra_field_is_malformed_and_does_not_raise() -> None:
    raw = encoded(BET)[:-1] + b', "extra": ' + b"[" * 5_000 + b"]" * 5_000 + b"}"
    result = decode_bet(raw)
    assert isinstance(result, Invalid)
    assert (result.reason, result.detail) == ("malformed", "JSON nested too deeply")


def test_a_bet_time_with_an_offset_without_colon_is_tolerated_as_documented() -> None:
    assert isinstance(decode_bet(encoded(BET | {"at": "2026-11-29T12:00:00+0100"})), BetPlaced)


# What is accepted.


@pytest.mark.parametrize(
    ("body", "expected"), EXAMPLES, ids=[f"{b['type']}-{i}" for i, (b, _) in enumerate(EXAMPLES)]
)
def test_a_valid_event_decodes_to_its_struct_with_its_values(
    body: dict[str, Any], expected: Event
) -> None:
    raw = encoded(body)
    topic = topic_of(body)
    decoded = decode_bet(raw) if topic == "bets" else decode_round(raw)
    assert decoded == expected
    assert type(decoded) is type(expected)
    assert decode_event(raw) == (topic, expected)


@pytest.mark.parametrize(("body", "expected"), EXAMPLES, ids=[b["type"] for b, _ in EXAMPLES])
def test_unknown_extra_fields_are_ignored(body: dict[str, Any], expected: Event) -> None:
    extra = {"colour": "green", "nested": {"a": [1, {"b": None}]}, "stake2": -1, "V": 2}
    raw = encoded(body | extra)
    assert decode_event(raw) == (topic_of(body), expected)


def test_an_absent_pick_decodes_as_an_empty_pick() -> None:
    absent = decode_bet(encoded(without(BET, "pick") | {"kind": "big"}))
    empty = decode_bet(encoded(BET | {"pick": [], "kind": "big"}))
    assert isinstance(absent, BetPlaced)
    assert absent.pick == ()
    assert absent == empty


def test_the_fields_of_an_event_may_come_in_any_order() -> None:
    body = dict(reversed(BET.items()))
    assert decode_bet(encoded(body)) == expected_of(BET)


def test_a_pick_that_is_not_valid_for_the_game_is_still_a_well_formed_bet() -> None:
    body = BET | {"kind": "no_such_kind", "pick": [99, -1]}
    decoded = decode_bet(encoded(body))
    assert isinstance(decoded, BetPlaced)
    assert decoded.pick == (99, -1)


def test_the_decoders_accept_whitespace_around_the_event() -> None:
    assert decode_round(b" \n" + encoded(OPENED) + b"\r\n") == expected_of(OPENED)


# Never raises: arbitrary input.

JSON_LEAVES = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20)
)
JSON_VALUES = st.recursive(
    JSON_LEAVES,
    lambda children: (
        st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=10), children, max_size=5)
    ),
    max_leaves=20,
)
FIELDS = sorted({name for body, _ in EXAMPLES for name in body} | {"dice", "discs", "pick"})
NAMED = {*FIELDS, "dice/discs"}


def near_valid_events() -> st.SearchStrategy[dict[str, Any]]:
    """A valid event with some fields removed and some replaced by arbitrary JSON."""
    return st.builds(
        lambda body, dropped, changes: without_all(body, dropped) | changes,
        st.sampled_from([body for body, _ in EXAMPLES]),
        st.sets(st.sampled_from(FIELDS), max_size=3),
        st.dictionaries(st.sampled_from(FIELDS), JSON_VALUES | JSON_LEAVES, max_size=3),
    )


def without_all(body: dict[str, Any], fields: set[str]) -> dict[str, Any]:
    return {name: value for name, value in body.items() if name not in fields}


def assert_classified(raw: bytes) -> None:
    """Every decoder gives an event or an Invalid with a decoder code; an invalid field is named."""
    results = [decode_round(raw), decode_bet(raw), decode_event(raw)[1]]
    for result in results:
        assert isinstance(result, Event | Invalid)
        if isinstance(result, Invalid):
            assert result.reason in DECODER_CODES
            assert result.detail
            if result.reason == "invalid_field":
                assert result.detail.split(":", 1)[0] in NAMED, result.detail
    topic, event = decode_event(raw)
    assert topic in ("rounds", "bets")
    assert event == (results[1] if topic == "bets" else results[0])


@given(st.binary())
def test_arbitrary_bytes_never_raise_and_are_classified(raw: bytes) -> None:
    assert_classified(raw)


@given(JSON_VALUES)
def test_arbitrary_json_never_raises_and_is_classified(value: object) -> None:
    assert_classified(encoded(value))


@given(near_valid_events())
def test_a_damaged_event_never_raises_and_is_classified(body: dict[str, Any]) -> None:
    assert_classified(encoded(body))


@given(st.sampled_from([body for body, _ in EXAMPLES]), st.data())
def test_a_cut_or_corrupted_event_never_raises_and_is_classified(
    body: dict[str, Any], data: st.DataObject
) -> None:
    raw = encoded(body)
    at = data.draw(st.integers(0, len(raw) - 1))
    byte = data.draw(st.integers(0, 255))
    assert_classified(raw[:at])
    assert_classified(raw[:at] + bytes([byte]) + raw[at + 1 :])


@given(near_valid_events())
def test_an_event_the_decoders_accept_encodes_back_to_the_same_event(body: dict[str, Any]) -> None:
    decoded = decode_event(encoded(body))[1]
    if isinstance(decoded, Event):
        assert decode_event(msgspec.json.encode(decoded))[1] == decoded
