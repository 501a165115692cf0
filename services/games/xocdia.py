"""Xoc Dia: four discs, red or white; the rules look at r, the number of red discs (CONTRACT 4)."""

from collections.abc import Mapping

from .model import LOSE, PUSH, Outcome, Pick, Verdict, when, win
from .outcomes import reds_of

NONE: tuple[Pick, ...] = ((),)

PICKS: Mapping[str, tuple[Pick, ...]] = {
    "reds": tuple((n,) for n in range(5)),
    "four_same": NONE,
    "odd": NONE,
    "even": NONE,
    "big": NONE,
    "small": NONE,
}
ORDERED: frozenset[str] = frozenset()
"""Kinds whose pick keeps the order it came in: none (every pick is a single number)."""

REDS_ODDS: Mapping[int, tuple[int, int]] = {
    0: (14, 1),
    1: (14, 5),
    2: (3, 2),
    3: (14, 5),
    4: (14, 1),
}


def decide(kind: str, pick: Pick, outcome: Outcome) -> Verdict:
    """The verdict of a valid Xoc Dia wager on four discs; big and small push when r is 2."""
    r = reds_of(outcome)
    match kind, pick:
        case "reds", (n,):
            return win(*REDS_ODDS[n]) if r == n else LOSE
        case "four_same", ():
            return when(r in (0, 4), 13, 2)
        case "odd", ():
            return when(r % 2 == 1, 24, 25)
        case "even", ():
            return when(r % 2 == 0, 24, 25)
        case "big", ():
            return PUSH if r == 2 else when(r >= 3, 24, 25)
        case "small", ():
            return PUSH if r == 2 else when(r <= 1, 24, 25)
        case _:
            raise ValueError(f"no Xoc Dia wager {kind} {list(pick)}")
