"""Sic Bo: a worked example for every row of the paytable (CONTRACT section 4), worked by hand."""

import pytest

from services.games import Dice, payout, verdict, wager

MAX = 2**53 - 1


def pays(kind: str, pick: list[int], dice: Dice, stake: int = 100) -> int:
    w = wager("sicbo", kind, pick)
    assert w is not None
    return payout(stake, verdict(w, dice))


@pytest.mark.parametrize(
    ("kind", "dice", "expected"),
    [
        ("small", (1, 1, 2), 200),  # total 4
        ("small", (6, 3, 1), 200),  # total 10
        ("small", (6, 4, 1), 0),  # total 11
        ("small", (1, 1, 1), 0),  # total 3 (and a triple)
        ("big", (6, 4, 1), 200),  # total 11
        ("big", (6, 6, 5), 200),  # total 17
        ("big", (5, 4, 1), 0),  # total 10
        ("big", (6, 6, 6), 0),  # total 18 (and a triple)
        ("odd", (1, 2, 4), 200),  # total 7
        ("odd", (1, 1, 2), 0),  # total 4
        ("even", (1, 1, 2), 200),  # total 4
        ("even", (1, 2, 4), 0),  # total 7
    ],
)
def test_small_big_odd_and_even_pay_even_money(kind: str, dice: Dice, expected: int) -> None:
    assert pays(kind, [], dice) == expected


@pytest.mark.parametrize(
    ("kind", "dice"),
    [
        ("small", (2, 2, 2)),  # total 6 would be small
        ("small", (3, 3, 3)),  # total 9 would be small
        ("big", (4, 4, 4)),  # total 12 would be big
        ("big", (5, 5, 5)),  # total 15 would be big
        ("odd", (3, 3, 3)),  # total 9 would be odd
        ("odd", (5, 5, 5)),  # total 15 would be odd
        ("even", (2, 2, 2)),  # total 6 would be even
        ("even", (4, 4, 4)),  # total 12 would be even
    ],
)
def test_small_big_odd_and_even_lose_on_a_triple(kind: str, dice: Dice) -> None:
    assert pays(kind, [], dice) == 0


def test_big_loses_on_a_triple() -> None:
    assert pays("big", [], (6, 6, 6), stake=1) == 0


@pytest.mark.parametrize(
    ("dice", "expected"),
    [((4, 1, 2), 200), ((2, 4, 4), 300), ((4, 4, 4), 400), ((1, 2, 3), 0)],
)
def test_single_pays_one_two_or_three_to_one_by_the_dice_showing_it(
    dice: Dice, expected: int
) -> None:
    assert pays("single", [4], dice) == expected


@pytest.mark.parametrize(
    ("dice", "expected"), [((3, 1, 3), 1100), ((3, 3, 3), 1100), ((3, 1, 2), 0)]
)
def test_double_pays_ten_to_one_when_the_number_shows_on_two_dice_or_more(
    dice: Dice, expected: int
) -> None:
    assert pays("double", [3], dice) == expected


@pytest.mark.parametrize(("dice", "expected"), [((5, 5, 5), 18100), ((6, 6, 6), 0), ((5, 6, 5), 0)])
def test_triple_pays_180_to_1_on_its_own_triple_only(dice: Dice, expected: int) -> None:
    assert pays("triple", [5], dice) == expected


@pytest.mark.parametrize(
    ("dice", "expected"), [((2, 2, 2), 3100), ((6, 6, 6), 3100), ((2, 2, 3), 0)]
)
def test_any_triple_pays_30_to_1(dice: Dice, expected: int) -> None:
    assert pays("any_triple", [], dice) == expected


@pytest.mark.parametrize(
    ("total", "dice", "expected"),
    [
        (4, (1, 1, 2), 6100),
        (17, (6, 5, 6), 6100),
        (5, (1, 3, 1), 3100),
        (16, (6, 6, 4), 3100),
        (6, (1, 2, 3), 1900),
        (15, (6, 3, 6), 1900),
        (7, (1, 2, 4), 1300),
        (14, (6, 6, 2), 1300),
        (8, (2, 2, 4), 900),
        (13, (6, 1, 6), 900),
        (9, (5, 3, 1), 800),
        (12, (6, 5, 1), 800),
        (10, (6, 3, 1), 700),
        (11, (6, 4, 1), 700),
    ],
)
def test_total_pays_its_row_of_the_table(total: int, dice: Dice, expected: int) -> None:
    assert pays("total", [total], dice) == expected


def test_total_wins_on_a_triple_too() -> None:
    assert pays("total", [9], (3, 3, 3)) == 800
    assert pays("total", [12], (4, 4, 4), stake=7) == 56


def test_total_loses_on_any_other_total() -> None:
    assert pays("total", [4], (1, 1, 1)) == 0
    assert pays("total", [10], (6, 4, 1)) == 0


@pytest.mark.parametrize(
    ("dice", "expected"), [((2, 5, 1), 600), ((5, 2, 2), 600), ((2, 2, 1), 0), ((5, 5, 5), 0)]
)
def test_combination_pays_five_to_one_when_both_numbers_show(dice: Dice, expected: int) -> None:
    assert pays("combination", [5, 2], dice) == expected


@pytest.mark.parametrize(
    ("kind", "dice", "expected"),
    [
        ("all_odd", (1, 3, 5), 700),
        ("all_odd", (1, 1, 1), 700),
        ("all_odd", (1, 3, 4), 0),
        ("all_even", (2, 4, 6), 700),
        ("all_even", (6, 6, 6), 700),
        ("all_even", (2, 4, 5), 0),
    ],
)
def test_all_odd_and_all_even_pay_six_to_one(kind: str, dice: Dice, expected: int) -> None:
    assert pays(kind, [], dice) == expected


@pytest.mark.parametrize(
    ("kind", "dice", "expected"),
    [
        ("two_odd_one_even", (1, 3, 2), 250),
        ("two_odd_one_even", (1, 2, 1), 250),
        ("two_odd_one_even", (1, 3, 5), 0),
        ("two_odd_one_even", (2, 4, 1), 0),
        ("two_even_one_odd", (2, 4, 1), 250),
        ("two_even_one_odd", (6, 5, 6), 250),
        ("two_even_one_odd", (2, 2, 2), 0),
        ("two_even_one_odd", (1, 3, 2), 0),
    ],
)
def test_two_of_a_parity_and_one_of_the_other_pay_three_to_two(
    kind: str, dice: Dice, expected: int
) -> None:
    assert pays(kind, [], dice) == expected


@pytest.mark.parametrize(
    ("stake", "expected"),
    [(1, 2), (3, 7), (7, 17), (19, 47), (21, 52), (MAX, 22517998136852477)],
)
def test_three_to_two_rounds_the_winnings_down_at_odd_stakes(stake: int, expected: int) -> None:
    # 1 + 1; 3 + 4 (4.5); 7 + 10 (10.5); 19 + 28 (28.5); 21 + 31 (31.5); (2**53-1) + (3 * 2**52 - 2)
    assert pays("two_odd_one_even", [], (1, 3, 6), stake) == expected


@pytest.mark.parametrize(("dice", "expected"), [((4, 1, 3), 3100), ((1, 3, 3), 0), ((1, 3, 5), 0)])
def test_three_singles_pays_30_to_1_on_exactly_its_three_numbers(dice: Dice, expected: int) -> None:
    assert pays("three_singles", [3, 4, 1], dice) == expected


@pytest.mark.parametrize(
    ("pick", "dice", "expected"),
    [
        ([2, 3], (2, 3, 2), 6100),
        ([2, 3], (3, 3, 2), 0),
        ([2, 3], (2, 2, 2), 0),
        ([3, 2], (3, 2, 3), 6100),
        ([3, 2], (2, 2, 3), 0),
    ],
)
def test_double_and_single_pays_60_to_1_on_the_pair_and_the_single(
    pick: list[int], dice: Dice, expected: int
) -> None:
    assert pays("double_and_single", pick, dice) == expected


@pytest.mark.parametrize(
    ("pick", "dice", "expected"),
    [
        ([2, 3, 5, 6], (6, 2, 5), 800),
        ([2, 3, 5, 6], (2, 3, 5), 800),
        ([2, 3, 5, 6], (2, 2, 3), 0),  # two different dice only
        ([2, 3, 5, 6], (1, 2, 3), 0),  # 1 is not in the set
        ([1, 2, 3, 4], (4, 1, 3), 800),
        ([3, 4, 5, 6], (3, 4, 5), 800),
        ([3, 4, 5, 6], (6, 6, 6), 0),
        ([2, 3, 4, 5], (2, 5, 4), 800),
    ],
)
def test_four_numbers_pays_seven_to_one_on_three_different_dice_of_the_set(
    pick: list[int], dice: Dice, expected: int
) -> None:
    assert pays("four_numbers", pick, dice) == expected


def test_a_win_at_even_money_at_the_largest_stake_doubles_it_exactly() -> None:
    assert pays("small", [], (1, 2, 3), MAX) == 18014398509481982
