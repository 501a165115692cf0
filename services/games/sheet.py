"""The PAR sheet: exact probabilities and return to player of every wager, by enumeration.

Floor rounding (CONTRACT 4) pays a win at num:den floor(stake * num / den) on top of the stake, so
at stake N a wager returns its exact RTP minus shortfall(N) / N, where
shortfall(N) = sum over its winning odds of P(win at num:den) * ((N * num) mod den) / den.
shortfall(N) depends only on N modulo the lcm of those dens. Stake N misses the tolerance exactly
when N < shortfall(N) / tolerance, so in each residue class r the last stake that misses it is the
largest N = r (mod lcm) below shortfall(r) / tolerance. The minimum stake of a wager is one past the
largest of those: from it on, every stake returns within the tolerance of the exact RTP. The
minimum stake of a game is the largest over its wagers.
"""

from collections import Counter
from collections.abc import Mapping
from fractions import Fraction
from math import ceil, lcm

from msgspec import Struct

from .model import Verdict, Wager, payout
from .outcomes import outcomes
from .paytable import verdict, wagers

TOLERANCE = Fraction(1, 10_000)
"""0.01 percentage point of RTP."""


class Line(Struct, frozen=True, kw_only=True):
    """One wager's row: its odds, the chance of each result, and what it returns per unit staked."""

    wager: Wager
    odds: tuple[tuple[int, int], ...]
    win: Fraction
    lose: Fraction
    push: Fraction
    rtp: Fraction
    edge: Fraction
    rtp_at_stake: Fraction | None
    min_stake: int


class ParSheet(Struct, frozen=True, kw_only=True):
    """A game's probability accounting report over its equally likely outcomes."""

    game: str
    outcomes: int
    stake: int | None
    tolerance: Fraction
    lines: tuple[Line, ...]
    max_rtp: Fraction
    best: tuple[Wager, ...]
    min_stake: int


def par_sheet(game: str, stake: int | None = None) -> ParSheet:
    """The PAR sheet of a game; with a stake, also the RTP that floor rounding pays at it."""
    if stake is not None and stake < 1:
        raise ValueError(f"stake must be at least 1 minor unit, got {stake}")
    lines = tuple(line(w, every_verdict(w), stake) for w in wagers(game))
    max_rtp = max(x.rtp for x in lines)
    return ParSheet(
        game=game,
        outcomes=len(outcomes(game)),
        stake=stake,
        tolerance=TOLERANCE,
        lines=lines,
        max_rtp=max_rtp,
        best=tuple(x.wager for x in lines if x.rtp == max_rtp),
        min_stake=max(x.min_stake for x in lines),
    )


def every_verdict(w: Wager) -> dict[Verdict, Fraction]:
    """The probability of each verdict of the wager over its game's equally likely outcomes."""
    every = outcomes(w.game)
    tally = Counter(verdict(w, o) for o in every)
    return {v: Fraction(n, len(every)) for v, n in tally.items()}


def line(w: Wager, chances: Mapping[Verdict, Fraction], stake: int | None) -> Line:
    """The PAR row of a wager from the probability of each of its verdicts."""
    wins = {v: p for v, p in chances.items() if v.result == "win"}
    rtp = sum((p * (1 + Fraction(v.num, v.den)) for v, p in wins.items()), Fraction(0))
    rtp += sum((p for v, p in chances.items() if v.result == "push"), Fraction(0))
    return Line(
        wager=w,
        odds=tuple(sorted({(v.num, v.den) for v in wins}, key=lambda o: Fraction(*o))),
        win=sum(wins.values(), Fraction(0)),
        lose=sum((p for v, p in chances.items() if v.result == "lose"), Fraction(0)),
        push=sum((p for v, p in chances.items() if v.result == "push"), Fraction(0)),
        rtp=rtp,
        edge=1 - rtp,
        rtp_at_stake=None if stake is None else rtp_at(stake, chances),
        min_stake=last_short_stake(wins) + 1,
    )


def rtp_at(stake: int, chances: Mapping[Verdict, Fraction]) -> Fraction:
    """What the wager really returns per unit staked at this stake, floor rounding included."""
    return sum((p * payout(stake, v) for v, p in chances.items()), Fraction(0)) / stake


def last_short_stake(wins: Mapping[Verdict, Fraction]) -> int:
    """The largest stake at which floor rounding takes more than TOLERANCE off the RTP (0: none)."""
    period = lcm(*(v.den for v in wins))
    last = 0
    for r in range(period):
        shortfall = sum(
            (p * Fraction(r * v.num % v.den, v.den) for v, p in wins.items()), Fraction(0)
        )
        if shortfall:
            below = ceil(shortfall / TOLERANCE) - 1
            last = max(last, below - (below - r) % period)
    return last
