"""Thai HiLo: three dice, total 3..18; triples are not special (CONTRACT 4)."""

from collections.abc import Mapping
from itertools import combinations

from .model import LOSE, Outcome, Pick, Verdict, when, win
from .outcomes import dice_of

FACES = range(1, 7)
NONE: tuple[Pick, ...] = ((),)

PICKS: Mapping[str, tuple[Pick, ...]] = {
    "hi": NONE,
    "lo": NONE,
    "hilo_11": NONE,
    "single": tuple((n,) for n in FACES),
    "combination": tuple(combinations(FACES, 2)),
    "seq_123": NONE,
    "seq_456": NONE,
    "lo_n": tuple((n,) for n in FACES),
    "hi_n": tuple((n,) for n in range(3, 7)),
}
ORDERED: frozenset[str] = frozenset()
"""Kinds whose pick keeps the order it came in: none, every pick is sorted."""

SINGLE_ODDS: Mapping[int, int] = {1: 1, 2: 2, 3: 5}
LO_N_ODDS: Mapping[int, tuple[int, int]] = {
    1: (9, 5),
    2: (2, 1),
    3: (3, 1),
    4: (4, 1),
    5: (6, 1),
    6: (10, 1),
}
HI_N_ODDS: Mapping[int, tuple[int, int]] = {3: (6, 1), 4: (4, 1), 5: (3, 1), 6: (2, 1)}


def sequence(run: frozenset[int], dice: tuple[int, ...]) -> Verdict:
    """5:1 when the dice are exactly the run, 1:1 when exactly two distinct faces of it show."""
    match len(run.intersection(dice)):
        case 3:
            return win(5)
        case 2:
            return win(1)
        case _:
            return LOSE


def decide(kind: str, pick: Pick, outcome: Outcome) -> Verdict:
    """The verdict of a valid Thai HiLo wager on three dice."""
    dice = dice_of(outcome)
    total = sum(dice)
    lo = total <= 10
    hi = total >= 12
    match kind, pick:
        case "hi", ():
            return when(hi, 11, 10)
        case "lo", ():
            return when(lo, 19, 20)
        case "hilo_11", ():
            return when(total == 11, 6)
        case "single", (n,):
            shows = dice.count(n)
            return win(SINGLE_ODDS[shows]) if shows else LOSE
        case "combination", (a, b):
            return when(a in dice and b in dice, 5)
        case "seq_123", ():
            return sequence(frozenset((1, 2, 3)), dice)
        case "seq_456", ():
            return sequence(frozenset((4, 5, 6)), dice)
        case "lo_n", (n,):
            return win(*LO_N_ODDS[n]) if lo and n in dice else LOSE
        case "hi_n", (n,):
            return win(*HI_N_ODDS[n]) if hi and n in dice else LOSE
        case _:
            raise ValueError(f"no Thai HiLo wager {kind} {list(pick)}")
