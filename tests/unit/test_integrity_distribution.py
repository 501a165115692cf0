"""What the charts show: each integrity test's counts over a window against the fair counts,
exact, worked by hand."""

from __future__ import annotations

from fractions import Fraction

import pytest

from services.statistics.integrity import (
    FACES,
    REDS,
    TOTALS,
    charted,
    distribution,
    evaluate,
    examine,
)
from tests.unit.test_integrity import sicbo, xocdia


def test_four_sicbo_rounds_count_twelve_dice_against_two_of_each_face() -> None:
    outcomes = [(1, 1, 6), (2, 3, 6), (6, 6, 6), (4, 5, 1)]
    # Faces: 1 three times, 2 once, 3 once, 4 once, 5 once, 6 five times; 12 dice, 2 each fair.
    found = charted("sicbo", outcomes)
    assert found is not None
    assert (found.test, found.classes) == ("faces", ["1", "2", "3", "4", "5", "6"])
    assert found.counts == [3, 1, 1, 1, 1, 5]
    assert (found.expected, found.denominator) == ([2] * 6, 1)
    assert found.fair == [Fraction(2)] * 6


def test_an_odd_number_of_rounds_has_half_a_die_of_each_face_fair() -> None:
    found = charted("thai-hilo", [(1, 2, 3), (4, 5, 6), (2, 2, 5)])
    assert found is not None
    # 9 dice: 9/6 = 3/2 of each face, kept exact as 3 halves.
    assert found.counts == [1, 3, 1, 1, 2, 1]
    assert (found.expected, found.denominator) == ([3] * 6, 2)
    assert found.fair == [Fraction(3, 2)] * 6


def test_five_xocdia_rounds_against_the_binomial_of_four_discs() -> None:
    rounds = [xocdia(n, reds).outcome for n, reds in enumerate([0, 2, 2, 3, 4])]
    found = charted("xocdia", rounds)
    assert found is not None
    assert (found.test, found.classes) == ("reds", ["0", "1", "2", "3", "4"])
    assert found.counts == [1, 0, 2, 1, 1]
    # 5 C(4, k) / 16: 5/16, 20/16, 30/16, 20/16, 5/16.
    assert (found.expected, found.denominator) == ([5, 20, 30, 20, 5], 16)
    quarter, eighth, sixteenth = Fraction(1, 4), Fraction(1, 8), Fraction(1, 16)
    assert found.fair == [5 * sixteenth, 5 * quarter, 15 * eighth, 5 * quarter, 5 * sixteenth]


def test_the_totals_of_216_rounds_are_expected_as_the_ways_to_roll_them() -> None:
    counts = [18] * 12  # 216 rounds: the fair counts are the ways to roll each class
    found = distribution(TOTALS, counts)
    assert found.classes[0] == "3-5" and found.classes[-1] == "16-18"
    assert (found.expected, found.denominator) == (
        [10, 10, 15, 21, 25, 27, 27, 25, 21, 15, 10, 10],
        1,
    )


def test_a_board_charts_nothing_for_a_game_without_tests_and_counts_must_match_classes() -> None:
    assert charted("roulette", [(1, 2, 3)]) is None
    with pytest.raises(ValueError, match="one count per class"):
        distribution(REDS, [1, 2, 3])


def test_each_finding_comes_with_the_counts_it_tested() -> None:
    faces = [(n % 6 + 1, (n * 5) % 6 + 1, 6) for n in range(120)]
    rounds = [sicbo(n, dice) for n, dice in enumerate(faces)]  # sixes loaded: one die always 6
    examined = examine(rounds, window=100)
    assert [e.finding for e in examined] == evaluate(rounds, window=100)
    [table_faces] = [e for e in examined if e.test == "faces"]
    kept = faces[20:]  # the window: the last 100 rounds
    assert table_faces.distribution == distribution(FACES, FACES.counts(kept))
    assert table_faces.distribution.counts[5] == sum(d.count(6) for d in kept)
    assert sum(table_faces.distribution.counts) == 300
    assert table_faces.distribution.fair == [Fraction(50)] * 6
    assert table_faces.finding.verdict == "alarm"
