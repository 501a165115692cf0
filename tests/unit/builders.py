"""Hand-built events for the fold's worked examples."""

from __future__ import annotations

from typing import Any

import msgspec

from schemas.codec import encode
from schemas.records import Record, Refund, Settlement
from services.settlement.fold import Fold

AT = "2026-11-29T12:00:00Z"


def round_event(kind: str, round_id: str = "R1", table_id: str = "T1", **extra: Any) -> bytes:
    """A round event; its event_id is derived from its content unless given."""
    body: dict[str, Any] = {
        "type": f"round.{kind}",
        "v": 1,
        "event_id": extra.pop("event_id", f"{table_id}/{round_id}/{kind}"),
        "table_id": table_id,
        "round_id": round_id,
        "at": extra.pop("at", AT),
    }
    if kind in ("suspended", "reshaken", "cancelled"):
        body["reason"] = extra.pop("reason", f"{kind} by the dealer")
    body.update(extra)
    return msgspec.json.encode(body)


def bet(
    seq: int,
    kind: str = "big",
    pick: list[int] | None = None,
    stake: int = 100,
    round_id: str = "R1",
    table_id: str = "T1",
    **extra: Any,
) -> bytes:
    """A confirmed bet; its bet_id is derived from round and seq unless given."""
    body: dict[str, Any] = {
        "type": "bet.placed",
        "v": 1,
        "event_id": extra.pop("event_id", f"e-{round_id}-{seq}"),
        "table_id": table_id,
        "round_id": round_id,
        "at": extra.pop("at", AT),
        "bet_id": extra.pop("bet_id", f"{table_id}-{round_id}-{seq}"),
        "player_id": extra.pop("player_id", "alice"),
        "seq": seq,
        "kind": kind,
        "pick": pick or [],
        "stake": stake,
        "currency": extra.pop("currency", "EUR"),
    }
    body.update(extra)
    return msgspec.json.encode(body)


def sicbo_round(dice: list[int], last_seq: int, round_id: str = "R1") -> list[bytes]:
    """A whole Sic Bo round's events: opened, betting closed, result."""
    return [
        round_event("opened", round_id, game="sicbo"),
        round_event("betting_closed", round_id, last_seq=last_seq),
        round_event("result", round_id, dice=dice, at="2026-11-29T12:01:00Z"),
    ]


def run(messages: list[tuple[str, bytes]], fold: Fold | None = None) -> list[Record]:
    """Feed messages to a fold (a new one unless given) and collect every record."""
    fold = fold or Fold()
    records: list[Record] = []
    for topic, raw in messages:
        records.extend(fold.feed(topic, raw))
    return records


def rounds(*raws: bytes) -> list[tuple[str, bytes]]:
    return [("rounds", raw) for raw in raws]


def bets(*raws: bytes) -> list[tuple[str, bytes]]:
    return [("bets", raw) for raw in raws]


def settlement_record(
    n: int, result: str = "win", *, player_id: str = "P1", at: str = "2026-11-01T00:00:00Z"
) -> bytes:
    """The encoded settlement of bet b<n> of round T1-R1 (a Sic Bo big bet of 100)."""
    return encode(
        Settlement(
            v=1,
            settlement_id=f"settlement:b{n}",
            bet_id=f"b{n}",
            round_id="T1-R1",
            table_id="T1",
            player_id=player_id,
            game="sicbo",
            kind="big",
            pick=(),
            stake=100,
            currency="EUR",
            result=result,  # type: ignore[arg-type]
            payout=200 if result == "win" else 0,
            dice=(4, 5, 6),
            at=at,
        )
    )


def refund_record(
    n: int, reason: str = "round_cancelled", *, at: str = "2026-11-01T00:00:00Z"
) -> bytes:
    """The encoded refund of bet b<n> of round T1-R1 (a stake of 100)."""
    return encode(
        Refund(
            v=1,
            refund_id=f"refund:b{n}",
            bet_id=f"b{n}",
            round_id="T1-R1",
            table_id="T1",
            player_id="P1",
            amount=100,
            currency="EUR",
            reason=reason,  # type: ignore[arg-type]
            at=at,
        )
    )
