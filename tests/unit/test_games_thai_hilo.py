"""Thai HiLo: a worked example for every row of the paytable (CONTRACT 4), worked by hand."""

import pytest

from services.games import Dice, payout, verdict, wager

MAX = 2**53 - 1


def pays(kind: str, pick: list[int], dice: Dice, stake: int = 100) -> int:
    w = wager("thai-hilo", kind, pick)
    assert w is not None
    return payout(stake, verdict(w, dice))


@pytest.mark.parametrize(
    ("dice", "expected"),
    [((6, 5, 1), 210), ((6, 6, 6), 210), ((5, 5, 1), 0), ((3, 3, 4), 0)],
)
def test_hi_pays_eleven_to_ten_on_totals_12_to_18(dice: Dice, expected: int) -> None:
    assert pays("hi", [], dice) == expected


@pytest.mark.parametrize(
    ("dice", "expected"),
    [((1, 2, 3), 195), ((1, 1, 1), 195), ((4, 4, 2), 195), ((5, 5, 1), 0), ((6, 6, 6), 0)],
)
def test_lo_pays_nineteen_to_twenty_on_totals_3_to_10(dice: Dice, expected: int) -> None:
    assert pays("lo", [], dice) == expected


@pytest.mark.parametrize(
    ("stake", "expected"),
    [(1, 2), (3, 6), (7, 14), (19, 39), (21, 44), (MAX, 18915118434956081)],
)
def test_hi_rounds_the_winnings_down(stake: int, expected: int) -> None:
    # 1 + 1 (1.1); 3 + 3 (3.3); 7 + 7 (7.7); 19 + 20 (20.9); 21 + 23 (23.1)
    assert pays("hi", [], (6, 6, 1), stake) == expected


@pytest.mark.parametrize(
    ("stake", "expected"),
    [(1, 1), (3, 5), (7, 13), (19, 37), (21, 40), (MAX, 17564038546744932)],
)
def test_lo_rounds_the_winnings_down(stake: int, expected: int) -> None:
    # 1 + 0 (0.95); 3 + 2 (2.85); 7 + 6 (6.65); 19 + 18 (18.05); 21 + 19 (19.95)
    assert pays("lo", [], (1, 2, 3), stake) == expected


def test_a_triple_is_not_special_in_thai_hilo() -> None:
    assert pays("lo", [], (3, 3, 3)) == 195
    assert pays("hi", [], (4, 4, 4)) == 210


@pytest.mark.parametrize(("dice", "expected"), [((5, 5, 1), 700), ((6, 4, 1), 700), ((6, 5, 1), 0)])
def test_hilo_11_pays_six_to_one_on_a_total_of_11(dice: Dice, expected: int) -> None:
    assert pays("hilo_11", [], dice) == expected


@pytest.mark.parametrize(
    ("dice", "expected"),
    [((6, 1, 2), 200), ((6, 6, 2), 300), ((6, 6, 6), 600), ((1, 2, 3), 0)],
)
def test_single_pays_one_two_or_five_to_one_by_the_dice_showing_it(
    dice: Dice, expected: int
) -> None:
    assert pays("single", [6], dice) == expected


@pytest.mark.parametrize(("dice", "expected"), [((6, 1, 1), 600), ((1, 1, 1), 0), ((6, 6, 2), 0)])
def test_combination_pays_five_to_one_when_both_numbers_show(dice: Dice, expected: int) -> None:
    assert pays("combination", [6, 1], dice) == expected


@pytest.mark.parametrize(
    ("dice", "expected"),
    [
        ((3, 1, 2), 600),
        ((1, 2, 4), 200),
        ((1, 1, 2), 200),  # two distinct members of 1, 2, 3 show
        ((2, 3, 3), 200),
        ((3, 1, 6), 200),
        ((1, 1, 1), 0),  # one distinct member only
        ((1, 4, 5), 0),
        ((4, 5, 6), 0),
    ],
)
def test_seq_123_pays_five_to_one_on_1_2_3_and_even_money_on_two_of_them(
    dice: Dice, expected: int
) -> None:
    assert pays("seq_123", [], dice) == expected


@pytest.mark.parametrize(
    ("dice", "expected"),
    [
        ((6, 5, 4), 600),
        ((4, 6, 1), 200),
        ((5, 5, 6), 200),
        ((6, 6, 6), 0),
        ((4, 1, 2), 0),
        ((1, 2, 3), 0),
    ],
)
def test_seq_456_pays_five_to_one_on_4_5_6_and_even_money_on_two_of_them(
    dice: Dice, expected: int
) -> None:
    assert pays("seq_456", [], dice) == expected


@pytest.mark.parametrize(
    ("n", "dice", "expected"),
    [
        (1, (1, 2, 3), 280),
        (1, (5, 1, 4), 280),  # total 10
        (1, (1, 5, 5), 0),  # total 11
        (1, (2, 3, 4), 0),  # no 1
        (2, (2, 1, 1), 300),
        (3, (3, 3, 4), 400),
        (4, (4, 4, 2), 500),
        (5, (5, 1, 1), 700),
        (5, (5, 5, 1), 0),  # total 11
        (6, (6, 1, 1), 1100),
        (6, (6, 2, 2), 1100),  # total 10
        (6, (6, 3, 2), 0),  # total 11
    ],
)
def test_lo_n_pays_its_row_when_the_total_is_lo_and_n_shows(
    n: int, dice: Dice, expected: int
) -> None:
    assert pays("lo_n", [n], dice) == expected


@pytest.mark.parametrize(
    ("stake", "expected"),
    [(1, 2), (3, 8), (7, 19), (19, 53), (21, 58), (MAX, 25220157913274774)],
)
def test_lo_1_pays_nine_to_five_rounded_down(stake: int, expected: int) -> None:
    # 1 + 1 (1.8); 3 + 5 (5.4); 7 + 12 (12.6); 19 + 34 (34.2); 21 + 37 (37.8)
    assert pays("lo_n", [1], (1, 1, 1), stake) == expected


@pytest.mark.parametrize(
    ("n", "dice", "expected"),
    [
        (3, (3, 4, 5), 700),
        (3, (3, 3, 3), 0),  # total 9
        (3, (3, 4, 4), 0),  # total 11
        (4, (4, 4, 4), 500),
        (5, (5, 6, 1), 400),
        (6, (6, 6, 6), 300),
        (6, (6, 4, 1), 0),  # total 11
        (6, (5, 5, 5), 0),  # no 6
    ],
)
def test_hi_n_pays_its_row_when_the_total_is_hi_and_n_shows(
    n: int, dice: Dice, expected: int
) -> None:
    assert pays("hi_n", [n], dice) == expected
