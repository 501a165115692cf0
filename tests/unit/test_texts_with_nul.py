"""U+0000 (NUL) in a text of an input: refused where it enters, skipped where it was let in.

No PostgreSQL text column can hold a NUL (the read side's, nor most wallets'), so an input with
one is `invalid_field`, named after its field, like any other value its schema refuses; and the
projector skips (counts and logs) an input or decision holding one, which only a topic written by
workers from before that could carry, instead of failing the batch at every start.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from schemas.codec import NUL, Invalid, decode_bet, decode_event, decode_round, encode, spells_nul
from schemas.events import BetPlaced, Event
from schemas.journal import records as journal_records
from schemas.records import Rejected, Settlement
from services.history import counters
from services.history.projection import Changes
from services.settlement.fold import Fold
from tests.unit.test_codec_rejections import EXAMPLES

AT = "2026-11-29T12:00:00Z"
OPENED = {
    "type": "round.opened",
    "v": 1,
    "event_id": "o1",
    "table_id": "T1",
    "round_id": "R1",
    "at": AT,
    "game": "sicbo",
}


def bet(n: int, **fields: Any) -> dict[str, Any]:
    body = OPENED | {"type": "bet.placed", "event_id": f"b{n}", "bet_id": f"B{n}"}
    del body["game"]
    body |= {"player_id": "alice", "seq": n, "kind": "big", "stake": 100, "currency": "EUR"}
    return body | fields


def raw(body: dict[str, Any]) -> bytes:
    return json.dumps(body).encode()  # json.dumps writes a NUL as \u0000


TEXTS = [
    (body, name)
    for body, _ in EXAMPLES
    for name, value in body.items()
    if isinstance(value, str) and name not in ("type", "at", "currency", "game", "sig")
]
"""Every free text of every example event: its ids, kind, reasons and authoriser."""


def decoded(body: dict[str, Any]) -> list[object]:
    data = raw(body)
    topic = "bets" if body["type"] == "bet.placed" else "rounds"
    first = decode_bet(data) if topic == "bets" else decode_round(data)
    return [first, decode_event(data)[1]]


@pytest.mark.parametrize(("body", "name"), TEXTS, ids=[f"{b['type']}.{n}" for b, n in TEXTS])
def test_a_nul_in_any_text_of_an_event_is_an_invalid_field_named_after_it(
    body: dict[str, Any], name: str
) -> None:
    for where in ("\x00", "a\x00", "\x00b", "a\x00b\x00"):
        for result in decoded(body | {name: where}):
            assert result == Invalid(
                reason="invalid_field",
                detail=f"{name}: contains U+0000 (NUL), which no text of an event may hold",
            )
    # Another control character is refused only where every control is: in a dealer or shaker
    # id, which must be printable (tests/unit/test_codec_rejections.py).
    other = "a\x01b" if name not in ("dealer_id", "shaker_id") else "a\u00a0b"
    assert all(isinstance(r, Event) for r in decoded(body | {name: other}))


def test_a_backslash_then_u0000_is_six_characters_and_no_nul() -> None:
    body = bet(1, player_id="al\\u0000ice")
    data = raw(body)
    assert NUL in data
    [first, second] = decoded(body)
    assert isinstance(first, BetPlaced) and first.player_id == "al\\u0000ice"
    assert second == first


@given(st.text(min_size=1, max_size=20))
def test_an_id_is_accepted_exactly_when_it_holds_no_nul(player_id: str) -> None:
    results = decoded(bet(1, player_id=player_id))
    if "\x00" in player_id:
        assert all(isinstance(r, Invalid) and r.reason == "invalid_field" for r in results)
    else:
        assert all(isinstance(r, BetPlaced) and r.player_id == player_id for r in results)


@pytest.mark.parametrize("how", ["by topic", "as a replay line"])
def test_the_fold_rejects_a_bet_with_a_nul_and_settles_the_others(how: str) -> None:
    fold = Fold()
    bad = raw(bet(2, player_id="mallory\x00"))
    lines = [
        ("rounds", raw(OPENED)),
        ("bets", raw(bet(1))),
        ("bets", bad),
        ("bets", raw(bet(3))),
        ("rounds", raw(OPENED | {"type": "round.betting_closed", "event_id": "c1", "last_seq": 3})),
        ("rounds", raw(OPENED | {"type": "round.result", "event_id": "r1", "dice": [6, 5, 4]})),
    ]
    out = [
        record
        for topic, data in lines
        for record in fold.feed(topic if how == "by topic" else None, data)
    ]
    rejected = [r for r in out if isinstance(r, Rejected)]
    assert rejected == [
        Rejected(
            v=1,
            reason="invalid_field",
            detail="player_id: contains U+0000 (NUL), which no text of an event may hold",
            topic="bets",
            raw=bad.decode(),
        )
    ]
    settled = sorted(r.bet_id for r in out if isinstance(r, Settlement))
    assert settled == ["B1", "B3"]
    assert fold.feed("bets", bad) == rejected  # a redelivery is refused again, never settled


def test_the_projection_skips_what_a_journal_holds_with_a_nul_and_applies_the_rest() -> None:
    """As an older worker may have committed it: the bet, and its settlement, with a NUL."""
    good, bad = raw(bet(1)), raw(bet(2, player_id="mallory\x00"))
    settlements = [
        Settlement(
            v=1,
            settlement_id=f"settlement:B{n}",
            bet_id=f"B{n}",
            player_id=player,
            table_id="T1",
            round_id="R1",
            game="sicbo",
            kind="big",
            pick=(),
            stake=100,
            currency="EUR",
            result="win",
            payout=200,
            dice=(6, 5, 4),
            at=AT,
        )
        for n, player in ((1, "alice"), (2, "mallory\x00"))
    ]
    [journal] = journal_records([good, bad], [encode(s) for s in settlements])
    assert NUL in journal
    changes = Changes()
    changes.feed("accepted", journal, 1)
    [(_, _, bet_id)] = changes.pairs.halves
    [row] = changes.pairs.joined
    assert bet_id == row.bet_id == "B1" and changes.bets_read == 2
    assert changes.unreadable == [
        "accepted: a journal's BetPlaced whose player_id holds U+0000 (NUL)",
        "accepted: a journal's Settlement whose player_id holds U+0000 (NUL)",
    ]
    assert counters.of_batch(changes)[("croupier_read_unreadable_total", '{topic="accepted"}')] == 2


def test_the_projection_counts_an_input_or_a_board_with_a_nul_as_unreadable() -> None:
    changes = Changes()
    changes.feed("accepted", raw(bet(2, player_id="mallory\x00")), 1)
    board = {"type": "table_stats", "v": 1, "table_id": "T\x00", "game": "sicbo"}
    board |= {"rounds": [], "counts": {}}
    changes.feed("table-stats", raw(board), 2)
    assert not changes.pairs.halves
    assert changes.unreadable[0] == "accepted: an input whose player_id holds U+0000 (NUL)"
    assert len(changes.unreadable) == 2 and not changes.boards


@given(st.binary(max_size=64) | st.text(alphabet='\\u0a{}" ', max_size=40).map(str.encode))
def test_a_text_spells_nul_exactly_when_it_holds_its_six_bytes(raw: bytes) -> None:
    assert spells_nul(raw) == (NUL in raw)
    assert spells_nul(b'{"a":"x' + raw + b'"}') == (NUL in b'{"a":"x' + raw + b'"}')
