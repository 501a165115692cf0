"""The vocabulary of every game: outcomes, wagers, verdicts and what a verdict pays."""

from typing import Literal, NamedTuple, assert_never

Dice = tuple[int, int, int]
Discs = tuple[str, str, str, str]
Outcome = Dice | Discs
Pick = tuple[int, ...]
Result = Literal["win", "lose", "push"]


class Verdict(NamedTuple):
    """A decided bet: a win pays odds num:den on top of the stake."""

    result: Result
    num: int = 0
    den: int = 1


class Wager(NamedTuple):
    """A bet's kind and selection in canonical form, valid for its game."""

    game: str
    kind: str
    pick: Pick


LOSE = Verdict("lose")
PUSH = Verdict("push")


def win(num: int, den: int = 1) -> Verdict:
    """A win at odds num:den."""
    return Verdict("win", num, den)


def when(won: bool, num: int, den: int = 1) -> Verdict:
    """A win at odds num:den if won, else a loss."""
    return win(num, den) if won else LOSE


Odds = tuple[Result, int, int]
"""A verdict as (result, num, den) such that every result pays `stake + stake * num // den`.

A win keeps its odds, a push is (push, 0, 1) and a loss (lose, -1, 1): one expression, exact.
"""


def odds(v: Verdict) -> Odds:
    """The verdict in the form that pays every result with one expression."""
    match v.result:
        case "win":
            return ("win", v.num, v.den)
        case "push":
            return ("push", 0, 1)
        case "lose":
            return ("lose", -1, 1)
        case _:
            assert_never(v.result)


def pay(stake: int, odds: Odds) -> int:
    """What a decided bet credits: stake + floor(stake * num / den) on a win, the stake on a push,
    nothing on a loss (CONTRACT 4: floor rounding, in minor units)."""
    _, num, den = odds
    return stake + stake * num // den


def payout(stake: int, v: Verdict) -> int:
    """What the wallet credits for a verdict."""
    return pay(stake, odds(v))
