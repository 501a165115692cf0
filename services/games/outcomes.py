"""Every equally likely outcome of each game, in the order the dealer enters it."""

from itertools import product

from .model import Dice, Discs, Outcome

GAMES: tuple[str, ...] = ("sicbo", "thai-hilo", "xocdia")

DICE: tuple[Dice, ...] = tuple((a, b, c) for a, b, c in product(range(1, 7), repeat=3))
DISCS: tuple[Discs, ...] = tuple((a, b, c, d) for a, b, c, d in product(("red", "white"), repeat=4))


def outcomes(game: str) -> tuple[Outcome, ...]:
    """The 216 ordered dice triples of the dice games, the 16 ordered disc sequences of Xoc Dia."""
    match game:
        case "sicbo" | "thai-hilo":
            return DICE
        case "xocdia":
            return DISCS
        case _:
            raise ValueError(f"unknown game {game!r}: expected one of {', '.join(GAMES)}")


def dice_of(outcome: Outcome) -> Dice:
    """The outcome of a dice game, or ValueError."""
    match outcome:
        case (int() as a, int() as b, int() as c) if all(1 <= d <= 6 for d in (a, b, c)):
            return (a, b, c)
        case _:
            raise ValueError(f"{outcome!r} is not three dice 1..6")


def reds_of(outcome: Outcome) -> int:
    """The number of red discs of a Xoc Dia outcome, or ValueError."""
    match outcome:
        case (str(), str(), str(), str()) if all(d in ("red", "white") for d in outcome):
            return outcome.count("red")
        case _:
            raise ValueError(f"{outcome!r} is not four discs red or white")


def canonical(outcome: Outcome) -> tuple[int, ...]:
    """What every rule looks at: the dice as a multiset (sorted), or the number of red discs."""
    match outcome:
        case (str(), *_):
            return (reds_of(outcome),)
        case _:
            return tuple(sorted(dice_of(outcome)))
