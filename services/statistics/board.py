"""The last-50-rounds statistics of a table, as players see them on the board."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from itertools import islice
from typing import Final

from schemas.events import Dice, Discs
from schemas.records import StatRound, TableStats

WINDOW: Final = 50
FACES: Final = tuple(str(face) for face in range(1, 7))
TOTALS: Final = tuple(str(total) for total in range(3, 19))
REDS: Final = tuple(str(reds) for reds in range(5))


class Board:
    """The rounds with a result of one table, newest first; cancelled and voided rounds never
    stay. It keeps `depth` rounds more than it shows, so that a round voided after its result
    leaves the last 50 with a result shown (a void reaches back at most the fold's horizon)."""

    __slots__ = ("game", "rounds", "table_id")

    def __init__(self, table_id: str, game: str, depth: int = 0) -> None:
        self.table_id = table_id
        self.game = game
        self.rounds: deque[StatRound] = deque(maxlen=WINDOW + depth)

    def record(self, game: str, round_id: str, dice: Dice | None, discs: Discs | None) -> None:
        """Put a round's result on the board; a table that changes game starts a new board."""
        if game != self.game:
            self.game = game
            self.rounds.clear()
        self.rounds.appendleft(StatRound(round_id=round_id, dice=dice, discs=discs))

    def correct(self, round_id: str, dice: Dice | None, discs: Discs | None) -> None:
        """A corrected round shows its new outcome, in its place."""
        for at, kept in enumerate(self.rounds):
            if kept.round_id == round_id:
                self.rounds[at] = StatRound(round_id=round_id, dice=dice, discs=discs)
                return

    def void(self, round_id: str) -> None:
        """A voided round leaves the board, as a cancelled one never enters it."""
        for kept in self.rounds:
            if kept.round_id == round_id:
                self.rounds.remove(kept)
                return

    def stats(self) -> TableStats:
        """The contract's `table_stats` record of this board: its last 50 rounds."""
        shown = list(islice(self.rounds, WINDOW))
        return TableStats(
            v=1,
            table_id=self.table_id,
            game=self.game,
            rounds=shown,
            counts=counts(self.game, shown),
        )


def counts(game: str, rounds: Iterable[StatRound]) -> dict[str, int | dict[str, int]]:
    """Counts over the rounds on a board, every key present even when zero."""
    if game == "xocdia":
        return _disc_counts([r.discs for r in rounds if r.discs is not None])
    return _dice_counts(game, [r.dice for r in rounds if r.dice is not None])


def _dice_counts(game: str, results: list[Dice]) -> dict[str, int | dict[str, int]]:
    faces = dict.fromkeys(FACES, 0)
    totals = dict.fromkeys(TOTALS, 0)
    named: dict[str, int]
    if game == "sicbo":
        named = {"big": 0, "small": 0, "odd": 0, "even": 0, "triple": 0}
    else:
        named = {"hi": 0, "lo": 0, "eleven": 0}
    for dice in results:
        total = sum(dice)
        totals[str(total)] += 1
        for face in set(dice):
            faces[str(face)] += 1
        if game == "sicbo":
            if dice[0] == dice[1] == dice[2]:
                named["triple"] += 1
                continue
            named["big" if total >= 11 else "small"] += 1
            named["odd" if total % 2 else "even"] += 1
        elif total >= 12:
            named["hi"] += 1
        elif total <= 10:
            named["lo"] += 1
        else:
            named["eleven"] += 1
    return {**named, "faces": faces, "totals": totals}


def _disc_counts(results: list[Discs]) -> dict[str, int | dict[str, int]]:
    reds = dict.fromkeys(REDS, 0)
    named = {"odd": 0, "even": 0, "big": 0, "small": 0}
    for discs in results:
        red = discs.count("red")
        reds[str(red)] += 1
        named["odd" if red % 2 else "even"] += 1
        if red >= 3:
            named["big"] += 1
        elif red <= 1:
            named["small"] += 1
    return {"reds": reds, **named}
