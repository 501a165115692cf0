"""Sic Bo: three dice, total 3..18; small, big, odd and even lose on a triple (CONTRACT 4)."""

from collections.abc import Mapping
from itertools import combinations, permutations

from .model import LOSE, Outcome, Pick, Verdict, when, win
from .outcomes import dice_of

FACES = range(1, 7)
NONE: tuple[Pick, ...] = ((),)
ONE_FACE: tuple[Pick, ...] = tuple((n,) for n in FACES)

PICKS: Mapping[str, tuple[Pick, ...]] = {
    "small": NONE,
    "big": NONE,
    "odd": NONE,
    "even": NONE,
    "single": ONE_FACE,
    "double": ONE_FACE,
    "triple": ONE_FACE,
    "any_triple": NONE,
    "total": tuple((t,) for t in range(4, 18)),
    "combination": tuple(combinations(FACES, 2)),
    "all_odd": NONE,
    "all_even": NONE,
    "two_odd_one_even": NONE,
    "two_even_one_odd": NONE,
    "three_singles": tuple(combinations(FACES, 3)),
    "double_and_single": tuple(permutations(FACES, 2)),
    "four_numbers": ((1, 2, 3, 4), (2, 3, 4, 5), (2, 3, 5, 6), (3, 4, 5, 6)),
}
ORDERED = frozenset({"double_and_single"})
"""Kinds whose pick keeps the order it came in ([pair, single]); the others are sorted."""

TOTAL_ODDS: Mapping[int, int] = {
    **{4: 60, 5: 30, 6: 18, 7: 12, 8: 8, 9: 7, 10: 6},
    **{17: 60, 16: 30, 15: 18, 14: 12, 13: 8, 12: 7, 11: 6},
}
"""The odds of a total; t and 21 - t pay the same."""


def decide(kind: str, pick: Pick, outcome: Outcome) -> Verdict:
    """The verdict of a valid Sic Bo wager on three dice."""
    dice = dice_of(outcome)
    total = sum(dice)
    triple = dice[0] == dice[1] == dice[2]
    odd = sum(d % 2 for d in dice)
    match kind, pick:
        case "small", ():
            return when(4 <= total <= 10 and not triple, 1)
        case "big", ():
            return when(11 <= total <= 17 and not triple, 1)
        case "odd", ():
            return when(total % 2 == 1 and not triple, 1)
        case "even", ():
            return when(total % 2 == 0 and not triple, 1)
        case "single", (n,):
            shows = dice.count(n)
            return win(shows) if shows else LOSE
        case "double", (n,):
            return when(dice.count(n) >= 2, 10)
        case "triple", (n,):
            return when(dice.count(n) == 3, 180)
        case "any_triple", ():
            return when(triple, 30)
        case "total", (t,):
            return when(total == t, TOTAL_ODDS[t])
        case "combination", (a, b):
            return when(a in dice and b in dice, 5)
        case "all_odd", ():
            return when(odd == 3, 6)
        case "all_even", ():
            return when(odd == 0, 6)
        case "two_odd_one_even", ():
            return when(odd == 2, 3, 2)
        case "two_even_one_odd", ():
            return when(odd == 1, 3, 2)
        case "three_singles", (a, b, c):
            return when(sorted(dice) == [a, b, c], 30)
        case "double_and_single", (p, s):
            return when(sorted(dice) == sorted((p, p, s)), 60)
        case "four_numbers", (a, b, c, d):
            return when(len(set(dice)) == 3 and set(dice) <= {a, b, c, d}, 7)
        case _:
            raise ValueError(f"no Sic Bo wager {kind} {list(pick)}")
