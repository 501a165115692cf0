"""Xoc Dia: a worked example for every row of the paytable (CONTRACT section 4), worked by hand."""

import pytest

from services.games import Discs, payout, verdict, wager

MAX = 2**53 - 1
R, W = "red", "white"


def pays(kind: str, pick: list[int], discs: Discs, stake: int = 100) -> int:
    w = wager("xocdia", kind, pick)
    assert w is not None
    return payout(stake, verdict(w, discs))


@pytest.mark.parametrize(
    ("n", "discs", "expected"),
    [
        (0, (W, W, W, W), 1500),
        (4, (R, R, R, R), 1500),
        (1, (W, R, W, W), 380),
        (3, (R, R, W, R), 380),
        (2, (R, W, R, W), 250),
        (2, (R, R, R, W), 0),
        (0, (R, W, W, W), 0),
        (4, (R, R, R, W), 0),
    ],
)
def test_reds_pays_its_row_when_exactly_n_discs_are_red(
    n: int, discs: Discs, expected: int
) -> None:
    assert pays("reds", [n], discs) == expected


@pytest.mark.parametrize(
    ("stake", "expected"),
    [(1, 3), (3, 11), (7, 26), (19, 72), (21, 79), (MAX, 34227357168015765)],
)
def test_one_or_three_reds_pay_fourteen_to_five_rounded_down(stake: int, expected: int) -> None:
    # 1 + 2 (2.8); 3 + 8 (8.4); 7 + 19 (19.6); 19 + 53 (53.2); 21 + 58 (58.8)
    assert pays("reds", [3], (R, W, R, R), stake) == expected


@pytest.mark.parametrize(
    ("stake", "expected"),
    [(1, 2), (3, 7), (7, 17), (19, 47), (21, 52), (MAX, 22517998136852477)],
)
def test_two_reds_pay_three_to_two_rounded_down(stake: int, expected: int) -> None:
    assert pays("reds", [2], (W, R, W, R), stake) == expected


@pytest.mark.parametrize(
    ("discs", "expected"), [((R, R, R, R), 750), ((W, W, W, W), 750), ((R, W, W, W), 0)]
)
def test_four_same_pays_thirteen_to_two_on_four_of_a_colour(discs: Discs, expected: int) -> None:
    assert pays("four_same", [], discs) == expected


@pytest.mark.parametrize(
    ("stake", "expected"),
    [(1, 7), (3, 22), (7, 52), (19, 142), (21, 157), (MAX, 67553994410557432)],
)
def test_four_same_rounds_six_and_a_half_down(stake: int, expected: int) -> None:
    # 1 + 6 (6.5); 3 + 19 (19.5); 7 + 45 (45.5); 19 + 123 (123.5); 21 + 136 (136.5)
    assert pays("four_same", [], (W, W, W, W), stake) == expected


@pytest.mark.parametrize(
    ("kind", "discs", "expected"),
    [
        ("odd", (R, W, W, W), 196),
        ("odd", (R, R, R, W), 196),
        ("odd", (R, R, W, W), 0),
        ("odd", (R, R, R, R), 0),
        ("even", (R, R, W, W), 196),
        ("even", (W, W, W, W), 196),
        ("even", (R, R, R, R), 196),
        ("even", (W, W, R, W), 0),
    ],
)
def test_odd_and_even_pay_twenty_four_to_twenty_five(
    kind: str, discs: Discs, expected: int
) -> None:
    assert pays(kind, [], discs) == expected


@pytest.mark.parametrize(
    ("kind", "discs", "expected"),
    [
        ("big", (R, R, R, W), 196),
        ("big", (R, R, R, R), 196),
        ("big", (R, W, W, W), 0),
        ("big", (W, W, W, W), 0),
        ("small", (W, W, W, W), 196),
        ("small", (W, R, W, W), 196),
        ("small", (R, R, W, R), 0),
        ("small", (R, R, R, R), 0),
    ],
)
def test_big_and_small_pay_twenty_four_to_twenty_five(
    kind: str, discs: Discs, expected: int
) -> None:
    assert pays(kind, [], discs) == expected


@pytest.mark.parametrize("kind", ["big", "small"])
@pytest.mark.parametrize("discs", [(R, R, W, W), (R, W, R, W), (W, R, R, W)])
def test_big_and_small_push_on_two_reds(kind: str, discs: Discs) -> None:
    w = wager("xocdia", kind, [])
    assert w is not None
    assert verdict(w, discs).result == "push"
    assert pays(kind, [], discs) == 100
    assert pays(kind, [], discs, stake=7) == 7
    assert pays(kind, [], discs, stake=MAX) == MAX


@pytest.mark.parametrize(
    ("stake", "expected"),
    [(1, 1), (3, 5), (7, 13), (19, 37), (21, 41), (MAX, 17654110539292342)],
)
def test_even_money_at_0_96_rounds_the_winnings_down(stake: int, expected: int) -> None:
    # 1 + 0 (0.96); 3 + 2 (2.88); 7 + 6 (6.72); 19 + 18 (18.24); 21 + 20 (20.16)
    assert pays("big", [], (R, R, R, W), stake) == expected
    assert pays("odd", [], (R, R, R, W), stake) == expected
