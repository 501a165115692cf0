"""The one canonical encoding of the records croupier writes (contract section 5)."""

from __future__ import annotations

import json

import msgspec
from hypothesis import given
from hypothesis import strategies as st

from schemas.codec import Invalid, decode_bet, encode, rejected
from schemas.records import Record, Refund, Rejected, Settlement, StatRound, TableStats

AT = "2026-11-29T12:01:00Z"

SICBO_WIN = Settlement(
    v=1,
    settlement_id="5f0c6f52-1c1b-5a3e-9a53-0b1f4f2d7a10",
    bet_id="T1-R1-1",
    round_id="R1",
    table_id="T1",
    player_id="alice",
    game="sicbo",
    kind="single",
    pick=(4,),
    stake=250,
    currency="EUR",
    result="win",
    payout=750,
    dice=(4, 4, 2),
    at=AT,
)
SICBO_WIN_BYTES = (
    b'{"type":"settlement","v":1,"settlement_id":"5f0c6f52-1c1b-5a3e-9a53-0b1f4f2d7a10",'
    b'"bet_id":"T1-R1-1","round_id":"R1","table_id":"T1","player_id":"alice","game":"sicbo",'
    b'"kind":"single","pick":[4],"stake":250,"currency":"EUR","result":"win","payout":750,'
    b'"dice":[4,4,2],"at":"2026-11-29T12:01:00Z"}'
)
XOCDIA_PUSH = Settlement(
    v=1,
    settlement_id="s-2",
    bet_id="X1-R9-3",
    round_id="R9",
    table_id="X1",
    player_id="bob",
    game="xocdia",
    kind="big",
    pick=(),
    stake=1000,
    currency="VND",
    result="push",
    payout=1000,
    discs=("red", "white", "red", "white"),
    at=AT,
)
XOCDIA_PUSH_BYTES = (
    b'{"type":"settlement","v":1,"settlement_id":"s-2","bet_id":"X1-R9-3","round_id":"R9",'
    b'"table_id":"X1","player_id":"bob","game":"xocdia","kind":"big","pick":[],"stake":1000,'
    b'"currency":"VND","result":"push","payout":1000,"discs":["red","white","red","white"],'
    b'"at":"2026-11-29T12:01:00Z"}'
)
REFUND = Refund(
    v=1,
    refund_id="r-1",
    bet_id="T1-R1-7",
    round_id="R1",
    table_id="T1",
    player_id="carol",
    amount=9007199254740991,
    currency="THB",
    reason="late_bet",
    at=AT,
)
REFUND_BYTES = (
    b'{"type":"refund","v":1,"refund_id":"r-1","bet_id":"T1-R1-7","round_id":"R1",'
    b'"table_id":"T1","player_id":"carol","amount":9007199254740991,"currency":"THB",'
    b'"reason":"late_bet","at":"2026-11-29T12:01:00Z"}'
)
REJECTED = Rejected(
    v=1, reason="invalid_field", detail="stake: must be >= 1", topic="bets", raw='{"stake":0}'
)
REJECTED_BYTES = (
    b'{"type":"rejected","v":1,"reason":"invalid_field","detail":"stake: must be >= 1",'
    b'"topic":"bets","raw":"{\\"stake\\":0}"}'
)
STATS = TableStats(
    v=1,
    table_id="T1",
    game="sicbo",
    rounds=[StatRound(round_id="R2", dice=(6, 6, 6)), StatRound(round_id="R1", dice=(4, 4, 2))],
    counts={"big": 0, "small": 1, "odd": 0, "even": 1, "triple": 1, "faces": {"2": 1}},
)
STATS_BYTES = (
    b'{"type":"table_stats","v":1,"table_id":"T1","game":"sicbo","rounds":['
    b'{"round_id":"R2","dice":[6,6,6]},{"round_id":"R1","dice":[4,4,2]}],'
    b'"counts":{"big":0,"small":1,"odd":0,"even":1,"triple":1,"faces":{"2":1}}}'
)
XOCDIA_STATS = TableStats(
    v=1,
    table_id="X1",
    game="xocdia",
    rounds=[StatRound(round_id="R9", discs=("red", "red", "red", "white"))],
    counts={"reds": {"3": 1}, "odd": 1, "even": 0, "big": 1, "small": 0},
)
XOCDIA_STATS_BYTES = (
    b'{"type":"table_stats","v":1,"table_id":"X1","game":"xocdia","rounds":['
    b'{"round_id":"R9","discs":["red","red","red","white"]}],'
    b'"counts":{"reds":{"3":1},"odd":1,"even":0,"big":1,"small":0}}'
)
WORKED: list[tuple[Record, bytes]] = [
    (SICBO_WIN, SICBO_WIN_BYTES),
    (XOCDIA_PUSH, XOCDIA_PUSH_BYTES),
    (REFUND, REFUND_BYTES),
    (REJECTED, REJECTED_BYTES),
    (STATS, STATS_BYTES),
    (XOCDIA_STATS, XOCDIA_STATS_BYTES),
]

# The field order of contract section 5, after `type` and `v`.
SETTLEMENT_FIELDS = [
    "settlement_id",
    "bet_id",
    "round_id",
    "table_id",
    "player_id",
    "game",
    "kind",
    "pick",
    "stake",
    "currency",
    "result",
    "payout",
]
REFUND_FIELDS = [
    "refund_id",
    "bet_id",
    "round_id",
    "table_id",
    "player_id",
    "amount",
    "currency",
    "reason",
    "at",
]
REJECTED_FIELDS = ["reason", "detail", "topic", "raw"]
TABLE_STATS_FIELDS = ["table_id", "game", "rounds", "counts"]


def keys(raw: bytes) -> list[str]:
    return list(json.loads(raw))


def test_a_sicbo_settlement_encodes_to_its_exact_bytes() -> None:
    assert encode(SICBO_WIN) == SICBO_WIN_BYTES


def test_a_xocdia_settlement_encodes_to_its_exact_bytes() -> None:
    assert encode(XOCDIA_PUSH) == XOCDIA_PUSH_BYTES


def test_a_refund_encodes_to_its_exact_bytes() -> None:
    assert encode(REFUND) == REFUND_BYTES


def test_a_rejection_encodes_to_its_exact_bytes() -> None:
    assert encode(REJECTED) == REJECTED_BYTES


def test_the_table_stats_encode_to_their_exact_bytes() -> None:
    assert encode(STATS) == STATS_BYTES
    assert encode(XOCDIA_STATS) == XOCDIA_STATS_BYTES


def test_a_settlement_lists_its_fields_in_contract_order() -> None:
    assert keys(encode(SICBO_WIN)) == ["type", "v", *SETTLEMENT_FIELDS, "dice", "at"]
    assert keys(encode(XOCDIA_PUSH)) == ["type", "v", *SETTLEMENT_FIELDS, "discs", "at"]


def test_a_refund_lists_its_fields_in_contract_order() -> None:
    assert keys(encode(REFUND)) == ["type", "v", *REFUND_FIELDS]


def test_a_rejection_lists_its_fields_in_contract_order() -> None:
    assert keys(encode(REJECTED)) == ["type", "v", *REJECTED_FIELDS]


def test_the_table_stats_list_their_fields_in_contract_order() -> None:
    assert keys(encode(STATS)) == ["type", "v", *TABLE_STATS_FIELDS]
    assert [list(entry) for entry in json.loads(encode(STATS))["rounds"]] == [
        ["round_id", "dice"],
        ["round_id", "dice"],
    ]


def test_a_settlement_carries_only_the_outcome_its_game_has() -> None:
    sicbo = json.loads(encode(SICBO_WIN))
    xocdia = json.loads(encode(XOCDIA_PUSH))
    assert "discs" not in sicbo
    assert "dice" not in xocdia
    assert sicbo["dice"] == [4, 4, 2]
    assert xocdia["discs"] == ["red", "white", "red", "white"]


def test_a_losing_settlement_keeps_a_payout_of_zero_and_an_empty_pick() -> None:
    lost = msgspec.structs.replace(SICBO_WIN, result="lose", payout=0, kind="big", pick=())
    decoded = json.loads(encode(lost))
    assert decoded["payout"] == 0
    assert decoded["pick"] == []


def test_the_encoding_has_no_whitespace_between_tokens() -> None:
    for record, _ in WORKED:
        raw = encode(record)
        compact = json.dumps(json.loads(raw), separators=(",", ":"), ensure_ascii=False)
        assert raw == compact.encode()
        assert b"\n" not in raw


def test_the_encoding_is_utf_8_without_escapes_for_non_ascii_text() -> None:
    record = msgspec.structs.replace(REFUND, player_id="ผู้เล่น-é")
    raw = encode(record)
    assert "ผู้เล่น-é".encode() in raw
    assert json.loads(raw)["player_id"] == "ผู้เล่น-é"


def test_encoding_the_same_record_twice_gives_the_same_bytes() -> None:
    for record, expected in WORKED:
        assert encode(record) == encode(record) == expected


def test_a_record_decoded_from_its_encoding_encodes_to_the_same_bytes() -> None:
    for record, expected in WORKED:
        assert encode(msgspec.json.decode(expected, type=type(record))) == expected


# `rejected(...)`: the input exactly as received.


def test_a_rejection_carries_the_reason_the_detail_and_the_topic() -> None:
    raw = b'{"type": "bet.placed", "stake": 0}'
    record = rejected(Invalid(reason="invalid_field", detail="stake: must be >= 1"), "bets", raw)
    assert record == Rejected(
        v=1, reason="invalid_field", detail="stake: must be >= 1", topic="bets", raw=raw.decode()
    )


def test_a_rejection_keeps_the_raw_input_byte_for_byte() -> None:
    raw = b'  {"type":\t"bet.placed",\n "note": "caf\xc3\xa9 \\u00e9 \\"q\\" \\\\"}\r\n'
    record = rejected(Invalid(reason="malformed", detail="x"), "bets", raw)
    assert record.raw.encode() == raw
    assert json.loads(encode(record))["raw"].encode() == raw


def test_a_rejection_shows_invalid_utf_8_bytes_as_backslash_x_escapes() -> None:
    raw = b'{"id": "a\xffb\xc3"}'
    record = rejected(Invalid(reason="malformed", detail="not valid JSON"), "rounds", raw)
    assert record.raw == '{"id": "a\\xffb\\xc3"}'
    assert encode(record) == (
        b'{"type":"rejected","v":1,"reason":"malformed","detail":"not valid JSON",'
        b'"topic":"rounds","raw":"{\\"id\\": \\"a\\\\xffb\\\\xc3\\"}"}'
    )


def test_a_rejection_of_empty_input_has_an_empty_raw() -> None:
    record = rejected(Invalid(reason="malformed", detail="empty"), "rounds", b"")
    assert record.raw == ""
    assert encode(record).endswith(b',"raw":""}')


def test_a_rejection_from_the_decoder_round_trips_the_input() -> None:
    raw = b'{"type":"bet.placed","v":1,"stake":0}'
    invalid = decode_bet(raw)
    assert isinstance(invalid, Invalid)
    decoded = json.loads(encode(rejected(invalid, "bets", raw)))
    assert decoded["type"] == "rejected"
    assert decoded["reason"] == invalid.reason
    assert decoded["detail"] == invalid.detail
    assert decoded["raw"].encode() == raw


@given(st.text())
def test_any_text_input_is_kept_exactly_in_the_rejection(text: str) -> None:
    raw = text.encode()
    record = rejected(Invalid(reason="malformed", detail="d"), "rounds", raw)
    assert msgspec.json.decode(encode(record), type=Rejected).raw.encode() == raw


@given(st.binary())
def test_any_byte_input_gives_a_rejection_that_encodes_to_valid_utf_8_json(raw: bytes) -> None:
    record = rejected(Invalid(reason="malformed", detail="d"), "rounds", raw)
    encoded = encode(record)
    assert encoded.decode("utf-8")
    assert msgspec.json.decode(encoded, type=Rejected) == record
    assert encode(record) == encoded


@given(
    st.builds(
        Refund,
        v=st.just(1),
        refund_id=st.text(),
        bet_id=st.text(),
        round_id=st.text(),
        table_id=st.text(),
        player_id=st.text(),
        amount=st.integers(1, 2**53 - 1),
        currency=st.sampled_from(["EUR", "THB", "VND"]),
        reason=st.sampled_from(["round_cancelled", "late_bet", "invalid_bet"]),
        at=st.just(AT),
    )
)
def test_a_refund_encodes_the_same_after_a_round_trip(record: Refund) -> None:
    encoded = encode(record)
    assert keys(encoded) == ["type", "v", *REFUND_FIELDS]
    assert encode(msgspec.json.decode(encoded, type=Refund)) == encoded
