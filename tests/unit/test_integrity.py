"""The outcome integrity tests: their fair distributions by enumeration, worked windows, and the
properties of windows, scopes and verdicts."""

from __future__ import annotations

import random
from collections import Counter
from fractions import Fraction
from itertools import product

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from services.statistics.command import as_text
from services.statistics.integrity import (
    FACES,
    REDS,
    TOTALS,
    CountedRound,
    Finding,
    Thresholds,
    evaluate,
    windows,
)

T0 = 1_800_000_000_000_000
"""An instant (microseconds since 1970): 2027-01-15."""


def counted(
    game: str, n: int, outcome: tuple[int, ...] | tuple[str, ...], **fields: str | int | None
) -> CountedRound:
    values: dict[str, object] = {
        "table_id": "XD-1" if game == "xocdia" else "SB-1",
        "round_id": f"R{n:05d}",
        "game": game,
        "at": T0 + n * 35_000_000,
        "outcome": outcome,
    }
    return CountedRound(**(values | fields))  # type: ignore[arg-type]


def sicbo(n: int, dice: tuple[int, int, int], **fields: str | int | None) -> CountedRound:
    return counted("sicbo", n, dice, **fields)


def xocdia(n: int, reds: int, **fields: str | int | None) -> CountedRound:
    return counted("xocdia", n, ("red",) * reds + ("white",) * (4 - reds), **fields)


def only(found: list[Finding], scope: str, name: str, test: str) -> Finding:
    [one] = [f for f in found if (f.scope, f.id, f.test) == (scope, name, test)]
    return one


# The fair distributions, by enumeration of the equally likely outcomes.


def test_the_totals_classes_are_the_216_dice_counted_by_hand() -> None:
    # Ways to roll each total 3..18 with three dice: 1 3 6 10 15 21 25 27 27 25 21 15 10 6 3 1.
    # 3-5 merged: 1 + 3 + 6 = 10; 16-18 merged: 6 + 3 + 1 = 10.
    ways = [10, 10, 15, 21, 25, 27, 27, 25, 21, 15, 10, 10]
    assert TOTALS.probabilities == tuple(Fraction(w, 216) for w in ways)
    assert sum(TOTALS.probabilities) == 1
    assert TOTALS.df == 11


def test_every_outcome_of_three_dice_falls_in_exactly_one_totals_class() -> None:
    counts = TOTALS.counts(product(range(1, 7), repeat=3))
    assert sum(counts) == 216
    assert [Fraction(c, 216) for c in counts] == list(TOTALS.probabilities)


def test_the_reds_are_the_16_disc_outcomes_counted_by_red_discs() -> None:
    outcomes = list(product(("red", "white"), repeat=4))
    counts = REDS.counts(outcomes)
    assert counts == [1, 4, 6, 4, 1]
    assert REDS.probabilities == tuple(Fraction(c, 16) for c in counts)
    assert sum(REDS.probabilities) == 1
    assert REDS.df == 4


def test_faces_count_every_die_of_every_round() -> None:
    assert FACES.counts([(6, 6, 1), (2, 6, 3)]) == [1, 1, 1, 0, 0, 3]
    assert FACES.df == 5


# Worked windows.


def test_a_window_of_80_sixes_in_300_dice_is_a_watch() -> None:
    # 100 rounds, 300 dice: 80 sixes and 44 of each other face; expected 50 each.
    # chi2 = 30^2/50 + 5 * 6^2/50 = 21.6 with 5 degrees of freedom;
    # p = erfc(sqrt(10.8)) + e^-10.8 (10.8^(1/2) / Gamma(3/2) + 10.8^(3/2) / Gamma(5/2))
    #   = 6.2366e-4: below 1e-3, not below 1e-6.
    faces = [6] * 80 + [face for face in range(1, 6) for _ in range(44)]
    rounds = [sicbo(n, (faces[3 * n], faces[3 * n + 1], faces[3 * n + 2])) for n in range(100)]
    found = only(evaluate(rounds), "table", "SB-1", "faces")
    assert (found.rounds, found.statistic, found.df) == (100, 21.6, 5)
    assert found.p_value == pytest.approx(6.236565e-4, rel=1e-6)
    assert found.verdict == "watch"


def test_a_window_of_reds_near_the_fair_counts_is_ok() -> None:
    # 160 rounds with 0..4 red discs 20, 40, 50, 40 and 10 times; expected 10, 40, 60, 40, 10.
    # chi2 = 10^2/10 + 10^2/60 = 35/3 with 4 degrees of freedom;
    # p = e^(-35/6) (1 + 35/6) = 0.0200100.
    reds = [0] * 20 + [1] * 40 + [2] * 50 + [3] * 40 + [4] * 10
    rounds = [xocdia(n, r) for n, r in enumerate(reds)]
    [found] = evaluate(rounds)
    assert found == Finding(
        scope="table",
        id="XD-1",
        game="xocdia",
        test="reds",
        rounds=160,
        statistic=float(Fraction(35, 3)),
        df=4,
        p_value=found.p_value,
        verdict="ok",
    )
    assert found.p_value == pytest.approx(0.02001004791, rel=1e-9)


def test_the_thresholds_are_configurable() -> None:
    faces = [6] * 80 + [face for face in range(1, 6) for _ in range(44)]
    rounds = [sicbo(n, (faces[3 * n], faces[3 * n + 1], faces[3 * n + 2])) for n in range(100)]
    strict = Thresholds(alarm=1e-3, watch=1e-2)
    assert only(evaluate(rounds, thresholds=strict), "table", "SB-1", "faces").verdict == "alarm"
    lax = Thresholds(alarm=1e-9, watch=1e-4)
    assert only(evaluate(rounds, thresholds=lax), "table", "SB-1", "faces").verdict == "ok"
    with pytest.raises(ValueError, match="alarm <= watch"):
        Thresholds(alarm=1e-2, watch=1e-3)


# Scopes.


def test_a_dealer_of_two_games_has_one_scope_per_game_and_rounds_without_one_make_none() -> None:
    rounds = [
        sicbo(1, (1, 2, 3), dealer_id="D1"),
        xocdia(2, 2, dealer_id="D1", shaker_id="bowl-1"),
        sicbo(3, (4, 5, 6)),
    ]
    found = evaluate(rounds)
    assert [(f.scope, f.id, f.game, f.test) for f in found] == [
        ("dealer", "D1", "sicbo", "faces"),
        ("dealer", "D1", "xocdia", "reds"),
        ("dealer", "D1", "sicbo", "totals"),
        ("shaker", "bowl-1", "xocdia", "reds"),
        ("table", "SB-1", "sicbo", "faces"),
        ("table", "SB-1", "sicbo", "totals"),
        ("table", "XD-1", "xocdia", "reds"),
    ]
    assert {f.rounds for f in found if f.scope == "table" and f.game == "sicbo"} == {2}
    assert all(f.verdict == "too_few" for f in found)


# Properties.

ROUNDS = st.lists(
    st.builds(
        lambda n, at, table, dice: sicbo(n, dice, at=at, table_id=table, dealer_id="D1"),
        st.integers(0, 10_000),
        st.integers(T0, T0 + 50),
        st.sampled_from(["SB-1", "SB-2", "SB-10"]),
        st.tuples(*[st.integers(1, 6)] * 3),
    ),
    max_size=60,
    unique_by=lambda r: (r.table_id, r.round_id),
)


@given(rounds=ROUNDS, window=st.integers(1, 40), seed=st.integers())
def test_a_window_is_the_last_rounds_by_result_instant_then_table_then_round_in_any_input_order(
    rounds: list[CountedRound], window: int, seed: int
) -> None:
    shuffled = rounds[:]
    random.Random(seed).shuffle(shuffled)
    kept = windows(shuffled, window).get(("dealer", "D1", "sicbo"), [])
    every = sorted(rounds, key=lambda r: (r.at, r.table_id, r.round_id))
    assert kept == every[-window:] if rounds else kept == []
    assert evaluate(shuffled, window) == evaluate(rounds, window)


@given(count=st.integers(1, 250), window=st.integers(1, 300), seed=st.integers())
def test_a_window_of_fewer_than_100_rounds_is_too_few_and_of_100_or_more_never(
    count: int, window: int, seed: int
) -> None:
    rng = random.Random(seed)
    rounds = [
        sicbo(n, (rng.randint(1, 6), rng.randint(1, 6), rng.randint(1, 6))) for n in range(count)
    ]
    for found in evaluate(rounds, window):
        assert found.rounds == min(count, window)
        assert (found.verdict == "too_few") == (found.rounds < 100)


@settings(max_examples=20)
@given(seed=st.integers())
def test_fair_dice_and_discs_are_almost_always_ok_and_never_an_alarm(seed: int) -> None:
    rng = random.Random(seed)
    rounds = [
        sicbo(n, (rng.randint(1, 6), rng.randint(1, 6), rng.randint(1, 6)), dealer_id=f"D{n % 5}")
        for n in range(3000)
    ] + [
        xocdia(n, sum(rng.random() < 0.5 for _ in range(4)), dealer_id=f"D{n % 5}")
        for n in range(3000)
    ]
    found = evaluate(rounds)
    verdicts = Counter(f.verdict for f in found)
    assert len(found) == 2 + 1 + 5 * 3
    assert verdicts["alarm"] == 0  # each test: 1e-6
    assert verdicts["watch"] <= 2  # each test: 1e-3


@settings(max_examples=20)
@given(seed=st.integers())
def test_a_die_loaded_toward_6_raises_the_alarm_at_a_thousand_rounds(seed: int) -> None:
    # A six one time in four: chi2 grows by about 0.15 a round (a mean of 150 at 1,000 rounds,
    # where the alarm needs 35.9 with 5 degrees of freedom).
    rng = random.Random(seed)

    def die() -> int:
        return 6 if rng.random() < 0.25 else rng.randint(1, 5)

    rounds = [sicbo(n, (die(), die(), die())) for n in range(1000)]
    assert only(evaluate(rounds), "table", "SB-1", "faces").verdict == "alarm"


def test_the_text_shows_one_aligned_line_per_finding_with_alarms_and_watches_in_capitals() -> None:
    def finding(name: str, p_value: float, verdict: str) -> Finding:
        return Finding(
            scope="dealer",
            id=name,
            game="sicbo",
            test="faces",
            rounds=2000,
            statistic=12.5,
            df=5,
            p_value=p_value,
            verdict=verdict,  # type: ignore[arg-type]
        )

    text = as_text([finding("D1", 2e-7, "alarm"), finding("Dealer 22", 0.5, "ok")])
    assert text == (
        "dealer  D1         sicbo  faces  2000 rounds  chi2 12.50  df 5  p 2e-07  ALARM\n"
        "dealer  Dealer 22  sicbo  faces  2000 rounds  chi2 12.50  df 5  p 0.5    ok\n"
    )
    assert as_text([]) == "no round with a result: nothing to test\n"
