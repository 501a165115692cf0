"""The rounds and their timelines in the database (a repository of a batch).

A round is read whole (`Round`, its state) by `Rounds.get`, evolved by the batch's accepted
events in memory, and written back by `Rounds.add`: new rows loaded, the others rewritten by one
statement from a staged copy, each moving to a new `version` (what a cached recall checks).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any, Final

import msgspec
from sqlalchemy import Connection

from services.history import bulk, schema
from services.history.rows import Row, json_text
from services.history.store import statements
from services.history.store.dialects import Dialect, load, stage
from services.history.views import Round

RoundKey = tuple[str, str]
"""A round: (table_id, round_id)."""


class Rounds:
    """The rows of `rounds` and `steps` in a batch's transaction."""

    def __init__(self, db: Connection, dialect: Dialect, counts: Counter[Any]) -> None:
        self.db = db
        self.dialect = dialect
        self.counts = counts

    def get(self, keys: Sequence[RoundKey]) -> dict[RoundKey, tuple[Round, int]]:
        """The rounds of these keys that exist, with their count of steps; locked until the
        commit where the database locks rows (they are rewritten from what is read)."""
        return {
            (row.table_id, row.round_id): (_round_of(row), row.steps)
            for row in self.dialect.rounds_of(self.db, keys)
        }

    def add(self, rounds: dict[RoundKey, Round], known: dict[RoundKey, tuple[Round, int]]) -> None:
        """Write the rounds (those not `known` are new) and the steps they took."""
        steps: list[Row] = []
        new_rows: list[Row] = []
        old_rows: list[Row] = []
        for key, rnd in sorted(rounds.items()):
            count = known[key][1] if key in known else 0
            for n, step in enumerate(rnd.timeline, start=count + 1):
                steps.append({"table_id": key[0], "round_id": key[1], "n": n, "step": _step(step)})
            row = _round_row(rnd, count + len(rnd.timeline))
            if key in known:
                old_rows.append(row)
            else:
                new_rows.append(row | {"version": 0})
        if new_rows:
            load(self.dialect, self.db, schema.rounds, new_rows)
            self.counts[("croupier_read_rounds", "")] += len(new_rows)
        if old_rows:  # one statement, not one a round
            stage(
                self.dialect,
                self.db,
                bulk.STAGE_ROUNDS,
                [statements.staged_round(row) for row in old_rows],
            )
            self.db.execute(statements.ROUND_UPDATE)
        load(self.dialect, self.db, schema.steps, steps)


def _step(step: Any) -> str:
    return msgspec.json.encode(step).decode()


def _round_row(rnd: Round, steps: int) -> Row:
    return {
        "table_id": rnd.table_id,
        "round_id": rnd.round_id,
        "game": rnd.game,
        "phase": rnd.phase,
        "suspensions": rnd.suspensions,
        "reshakes": rnd.reshakes,
        "last_seq": rnd.last_seq,
        "dice": json_text(rnd.dice and list(rnd.dice)),
        "discs": json_text(rnd.discs and list(rnd.discs)),
        "cancel_reason": rnd.cancel_reason,
        "steps": steps,
    }


_DICE: Final = msgspec.json.Decoder(tuple[int, int, int] | None)
_DISCS: Final = msgspec.json.Decoder(tuple[str, str, str, str] | None)


def _round_of(row: Any) -> Round:
    rnd = Round(row.table_id, row.round_id)
    rnd.game = row.game
    rnd.phase = row.phase
    rnd.suspensions = row.suspensions
    rnd.reshakes = row.reshakes
    rnd.last_seq = row.last_seq
    rnd.dice = _DICE.decode(row.dice) if row.dice else None
    rnd.discs = _DISCS.decode(row.discs) if row.discs else None  # type: ignore[assignment]
    rnd.cancel_reason = row.cancel_reason
    return rnd
