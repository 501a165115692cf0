"""A batch made ready for its transaction outside it: its bets' rows encoded for the database.

The projector encodes the next batch while the database writes the one before (docs/DESIGN.md,
"Pipelined"): a whole row is final once made, so it is encoded as the batch is fed
(`Preparing.take`), and the halves left when the batch ends at its end (`Preparing.done`).
"""

from __future__ import annotations

from dataclasses import dataclass

from services.history import bulk
from services.history.projection import Changes


@dataclass(frozen=True)
class Prepared:
    """A batch made ready for its transaction: its changes and its bets' rows, encoded."""

    changes: Changes
    whole: bulk.Encoded
    """Bets placed and decided in this batch: new rows, loaded as they are."""
    placed: bulk.Encoded
    """Bets placed in this batch and decided in a later one: new rows too, pending."""
    parts: bulk.Encoded
    """Decisions of bets not placed in this batch (placed before, or never, as a late bet's
    refund): merged into their rows, or new rows."""


class Preparing:
    """A batch made ready as it is fed: `take` encodes the rows made whole since it last ran
    (final once made), `done` the halves left when the batch ends, whose other half is in
    another batch: the bets placed and not decided yet, and the decisions of bets placed
    before."""

    def __init__(self, encoder: bulk.Encoder | None, changes: Changes) -> None:
        self.encoder = encoder
        self.changes = changes
        self.whole = bulk.Encoding(encoder)
        self.taken = 0

    def take(self) -> None:
        rows = self.changes.pairs.joined
        if len(rows) > self.taken:
            self.whole.add(rows[self.taken :])
            self.taken = len(rows)

    def done(self) -> Prepared:
        self.take()
        changes = self.changes
        return Prepared(
            changes,
            self.whole.done(),
            bulk.encoded(self.encoder, changes.pairs.pending()),
            bulk.encoded(self.encoder, changes.pairs.parts()),
        )
