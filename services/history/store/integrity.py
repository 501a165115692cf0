"""Each round's outcome integrity state in the database (a repository of a batch).

The state is `services.statistics.counted`'s, the one copy of which rounds count: a batch feeds
its accepted round events, in order, to the states its rounds had before it (`Outcomes.get`),
and writes back what they leave (`Outcomes.put`): an opening waiting for its result, a round
that counts with its result's instant and final outcome, or no row (cancelled, voided).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Final

import msgspec
from sqlalchemy import Connection, delete, select, tuple_

from services.history import bulk, schema
from services.history.memo import Memo
from services.history.store.dialects import Dialect
from services.statistics.counted import Counted, Opening, RoundKey, State
from services.statistics.integrity import CountedRound, Outcome

_T: Final = schema.integrity_rounds
_OUTCOME: Final = msgspec.json.Decoder(tuple[int | str, ...])
_ENCODE: Final = msgspec.json.encode


class Outcomes:
    """The rows of `integrity_rounds` in a batch's transaction."""

    def __init__(self, db: Connection, dialect: Dialect) -> None:
        self.db = db
        self.dialect = dialect

    def get(self, keys: Sequence[RoundKey]) -> list[State]:
        """The states of these rounds that have one."""
        found: list[State] = []
        for chunk in bulk.chunks(keys):
            rows = self.db.execute(
                select(_T).where(tuple_(_T.c.table_id, _T.c.round_id).in_(list(chunk)))
            )
            found += (state_of(row) for row in rows)
        return found

    def put(self, counted: Counted, keys: Iterable[RoundKey], known: Iterable[State] = ()) -> None:
        """Write what the batch left of these rounds, those it changed only: their states, or
        no row. `known`: their states before it (`get`)."""
        before = {(s.table_id, s.round_id): s for s in known}
        kept: list[dict[str, Any]] = []
        gone: list[RoundKey] = []
        for key in sorted(keys):
            state = counted.state(key)
            had = before.get(key)
            if state == had:
                continue  # a bet, a close, a suspension: nothing to write
            if state is None:
                gone.append(key)
            else:
                kept.append(row_of(state))
        for chunk in bulk.chunks(gone):
            self.db.execute(delete(_T).where(tuple_(_T.c.table_id, _T.c.round_id).in_(list(chunk))))
        if kept:
            stmt = self.dialect.insert(_T)
            self.db.execute(
                stmt.on_conflict_do_update(
                    index_elements=["table_id", "round_id"],
                    set_={c: stmt.excluded[c] for c in _CHANGING},
                ),
                kept,
            )


_CHANGING: Final = ("game", "dealer_id", "shaker_id", "at", "outcome")


def row_of(state: State) -> dict[str, Any]:
    """A state as its row of `integrity_rounds`."""
    at, outcome = (
        (state.at, _ENCODE(state.outcome).decode())
        if isinstance(state, CountedRound)
        else (None, None)
    )
    return {
        "table_id": state.table_id,
        "round_id": state.round_id,
        "game": state.game,
        "dealer_id": state.dealer_id,
        "shaker_id": state.shaker_id,
        "at": at,
        "outcome": outcome,
    }


def state_of(row: Any) -> State:
    """A row of `integrity_rounds` as its state."""
    if row.outcome is None:
        return Opening(
            table_id=row.table_id,
            round_id=row.round_id,
            game=row.game,
            dealer_id=row.dealer_id,
            shaker_id=row.shaker_id,
        )
    return counted_of(row)


def counted_of(row: Any) -> CountedRound:
    """A counted round's row (`outcome` not null, its columns in the table's order) as the tests
    take it."""
    table_id, round_id, game, dealer_id, shaker_id, at, outcome = row
    return CountedRound(
        table_id=table_id,
        round_id=round_id,
        game=game,
        at=at,
        outcome=_outcome(outcome),
        dealer_id=dealer_id,
        shaker_id=shaker_id,
    )


def _decode(text: str) -> Outcome:
    found: Outcome = _OUTCOME.decode(text)  # type: ignore[assignment]
    return found


_outcome: Final = Memo(_decode, size=1024)
"""An outcome from its JSON text: at most 216 distinct dice and 16 distinct discs."""
