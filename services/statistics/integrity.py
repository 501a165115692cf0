"""The outcome integrity tests (docs/CONTRACT.md, "Outcome integrity"): each table's, dealer's
and shaker's last counted rounds of one game against the fair distribution (pure).

A scope is a table, a dealer or a shaker within one game. Its window is its last `window` counted
rounds, ordered by their `round.result` instant, then table_id, then round_id. Each test is
Pearson's chi-square of the window's counts against the fair counts; its verdict is `too_few`
below MIN_ROUNDS rounds, else `alarm`, `watch` or `ok` by the p-value's thresholds.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from itertools import product
from math import comb, lcm
from typing import Final, Literal

import msgspec

from services.statistics.chisquare import statistic, survival

WINDOW: Final = 2000
"""Counted rounds of a scope tested by default: its last ones."""
MIN_ROUNDS: Final = 100
"""Fewer rounds in a window than this and a test's verdict is `too_few`."""
ALARM: Final = 1e-6
WATCH: Final = 1e-3

ScopeKind = Literal["table", "dealer", "shaker"]
Verdict = Literal["too_few", "alarm", "watch", "ok"]
Outcome = tuple[int, ...] | tuple[str, ...]
Order = tuple[int, str, str]
"""A round's place in a window: its result's instant (microseconds since 1970, UTC), table_id,
round_id."""


class CountedRound(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """A round that counts: it has a result and was neither cancelled nor voided; `outcome` is
    its final one (the last correction's, if any)."""

    table_id: str
    round_id: str
    game: str
    at: int
    """Its `round.result`'s instant, microseconds since 1970-01-01T00:00:00Z."""
    outcome: Outcome
    dealer_id: str | None = None
    shaker_id: str | None = None

    @property
    def order(self) -> Order:
        return (self.at, self.table_id, self.round_id)


class Thresholds(msgspec.Struct, frozen=True, kw_only=True):
    """p-values below `alarm` raise the alarm; below `watch`, a watch."""

    alarm: float = ALARM
    watch: float = WATCH

    def __post_init__(self) -> None:
        if not 0 <= self.alarm <= self.watch <= 1:
            raise ValueError(
                f"thresholds: expected 0 <= alarm <= watch <= 1, got alarm {self.alarm} and "
                f"watch {self.watch}"
            )

    def verdict(self, rounds: int, p_value: float) -> Verdict:
        if rounds < MIN_ROUNDS:
            return "too_few"
        if p_value < self.alarm:
            return "alarm"
        if p_value < self.watch:
            return "watch"
        return "ok"


DEFAULT: Final = Thresholds()
"""The contract's thresholds: alarm below 1e-6, watch below 1e-3."""


class Finding(msgspec.Struct, frozen=True, kw_only=True):
    """One test of one scope's window, as `croupier integrity --json` writes it."""

    scope: ScopeKind
    id: str
    game: str
    test: str
    rounds: int
    statistic: float
    df: int
    p_value: float
    verdict: Verdict


class Distribution(msgspec.Struct, frozen=True, kw_only=True):
    """A test's counts over a window against the fair counts: class i's fair count is
    `expected[i] / denominator`, n P(i) with n the counts' sum, exact (the E of the chi-square)."""

    test: str
    classes: list[str]
    counts: list[int]
    expected: list[int]
    denominator: int

    @property
    def fair(self) -> list[Fraction]:
        """Each class's fair count, as a fraction."""
        return [Fraction(e, self.denominator) for e in self.expected]


class Examined(msgspec.Struct, frozen=True, kw_only=True):
    """A finding and the distribution it tested."""

    finding: Finding
    distribution: Distribution

    @property
    def test(self) -> str:
        return self.finding.test


@dataclass(frozen=True, kw_only=True)
class Test:
    """A chi-square test: the class of each outcome's parts, and the classes' fair
    probabilities; its degrees of freedom are the classes less one."""

    name: str
    labels: tuple[str, ...]
    """Each class's name, as a chart shows it."""
    probabilities: tuple[Fraction, ...]
    classes: Callable[[Outcome], Iterable[int]]
    """The class index of each count an outcome adds (a die each for `faces`, one for others)."""

    @property
    def df(self) -> int:
        return len(self.probabilities) - 1

    def counts(self, outcomes: Iterable[Outcome]) -> list[int]:
        """The count of each class over the outcomes: each distinct outcome classed once (a
        window of 2,000 rounds holds at most 216 distinct dice, 16 distinct discs)."""
        counts = [0] * len(self.probabilities)
        for outcome, times in Counter(outcomes).items():
            for index in self.classes(outcome):
                counts[index] += times
        return counts


def distribution(test: Test, counts: Sequence[int]) -> Distribution:
    """The counts of a test's classes against their fair counts, n P(i)."""
    if len(counts) != len(test.probabilities):
        raise ValueError("one count per class")
    n = sum(counts)
    fair = [n * p for p in test.probabilities]
    denominator = lcm(*(f.denominator for f in fair))
    return Distribution(
        test=test.name,
        classes=list(test.labels),
        counts=list(counts),
        expected=[int(f * denominator) for f in fair],
        denominator=denominator,
    )


def total_class(total: int) -> int:
    """The class of a three-dice total: 3-5 merged (0), 6..15 one each (1..10), 16-18 merged
    (11)."""
    return min(max(total, 5), 16) - 5


DICE: Final = list(product(range(1, 7), repeat=3))
"""The 216 equally likely outcomes of three dice."""
FACES: Final = Test(
    name="faces",
    labels=tuple(str(face) for face in range(1, 7)),
    probabilities=(Fraction(1, 6),) * 6,
    classes=lambda dice: (int(face) - 1 for face in dice),
)
TOTALS: Final = Test(
    name="totals",
    labels=("3-5", *(str(total) for total in range(6, 16)), "16-18"),
    probabilities=tuple(
        Fraction(sum(1 for dice in DICE if total_class(sum(dice)) == c), len(DICE))
        for c in range(12)
    ),
    classes=lambda dice: (total_class(sum_of(dice)),),
)
REDS: Final = Test(
    name="reds",
    labels=tuple(str(reds) for reds in range(5)),
    probabilities=tuple(Fraction(comb(4, k), 16) for k in range(5)),
    classes=lambda discs: (discs.count("red"),),
)
TESTS: Final[dict[str, tuple[Test, ...]]] = {
    "sicbo": (FACES, TOTALS),
    "thai-hilo": (FACES, TOTALS),
    "xocdia": (REDS,),
}
"""The tests of each game."""


def charted(game: str, outcomes: Iterable[Outcome]) -> Distribution | None:
    """The distribution a table's board charts: its game's first test (the faces of the dice, the
    red discs), over the outcomes of its window; None for a game without tests."""
    tests = TESTS.get(game)
    if not tests:
        return None
    return distribution(tests[0], tests[0].counts(outcomes))


def sum_of(dice: Outcome) -> int:
    return sum(int(face) for face in dice)


def scopes(rnd: CountedRound) -> Iterable[tuple[ScopeKind, str]]:
    """The scopes a round belongs to: its table, and its dealer and shaker when it names them."""
    yield "table", rnd.table_id
    if rnd.dealer_id is not None:
        yield "dealer", rnd.dealer_id
    if rnd.shaker_id is not None:
        yield "shaker", rnd.shaker_id


def windows(
    rounds: Iterable[CountedRound], window: int = WINDOW
) -> dict[tuple[ScopeKind, str, str], list[CountedRound]]:
    """Each scope's (kind, id, game) last `window` counted rounds, oldest first."""
    if window < 1:
        raise ValueError("a window holds at least one round")
    members: defaultdict[tuple[ScopeKind, str, str], list[CountedRound]] = defaultdict(list)
    for rnd in sorted(rounds, key=_order, reverse=True):  # newest first: a full window is done
        for kind, name in scopes(rnd):
            kept = members[(kind, name, rnd.game)]
            if len(kept) < window:
                kept.append(rnd)
    return {scope: kept[::-1] for scope, kept in members.items()}


def evaluate(
    rounds: Iterable[CountedRound],
    window: int = WINDOW,
    thresholds: Thresholds = DEFAULT,
) -> list[Finding]:
    """Every test of every scope's window, sorted by scope, id and test (then game)."""
    return [e.finding for e in examine(rounds, window, thresholds)]


def examine(
    rounds: Iterable[CountedRound],
    window: int = WINDOW,
    thresholds: Thresholds = DEFAULT,
) -> list[Examined]:
    """`evaluate`'s findings, each with the counts it tested (for the charts)."""
    examined = [
        run(test, (kind, name, game), kept, thresholds)
        for (kind, name, game), kept in windows(rounds, window).items()
        for test in TESTS.get(game, ())
    ]
    return sorted(examined, key=lambda e: (e.finding.scope, e.finding.id, e.test, e.finding.game))


def run(
    test: Test,
    scope: tuple[ScopeKind, str, str],
    kept: Sequence[CountedRound],
    thresholds: Thresholds = DEFAULT,
) -> Examined:
    """One test of a scope (kind, id, game) over its window."""
    kind, name, game = scope
    counts = test.counts(rnd.outcome for rnd in kept)
    chi2 = statistic(counts, test.probabilities)
    p_value = survival(chi2, test.df)
    finding = Finding(
        scope=kind,
        id=name,
        game=game,
        test=test.name,
        rounds=len(kept),
        statistic=chi2,
        df=test.df,
        p_value=p_value,
        verdict=thresholds.verdict(len(kept), p_value),
    )
    return Examined(finding=finding, distribution=distribution(test, counts))


def _order(rnd: CountedRound) -> Order:
    return rnd.order
