"""One Sic Bo round of one bet, as its table publishes it: opened, the bet, closed, the result."""

from __future__ import annotations

import json


def round_of(table: str, round_id: str, *, stake: int) -> list[bytes]:
    """A `small` bet of `stake` on a round whose dice 1-2-3 (total 6) make it win 1:1."""
    rid = f"{table}-{round_id}"
    envelope = {"v": 1, "table_id": table, "round_id": rid}
    events = [
        {
            "type": "round.opened",
            "event_id": f"{rid}-e0",
            "at": "2026-12-01T12:00:00Z",
            "game": "sicbo",
        },
        {
            "type": "bet.placed",
            "event_id": f"{rid}-e1",
            "at": "2026-12-01T12:00:01Z",
            "bet_id": f"{rid}-b1",
            "player_id": f"P-{table}",
            "seq": 1,
            "kind": "small",
            "pick": [],
            "stake": stake,
            "currency": "EUR",
        },
        {
            "type": "round.betting_closed",
            "event_id": f"{rid}-e2",
            "at": "2026-12-01T12:00:02Z",
            "last_seq": 1,
        },
        {
            "type": "round.result",
            "event_id": f"{rid}-e3",
            "at": "2026-12-01T12:00:03Z",
            "dice": [1, 2, 3],
        },
    ]
    return [json.dumps({**envelope, **event}).encode() for event in events]
