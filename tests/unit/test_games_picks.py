"""Pick validation: what a bet may select, its canonical form, and what verdict() accepts."""

from collections import Counter
from collections.abc import Sequence
from itertools import permutations
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from services.games import (
    GAMES,
    Wager,
    odds_board,
    outcomes,
    pay,
    payout,
    verdict,
    wager,
    wagers,
)


@pytest.mark.parametrize(
    ("game", "kind", "pick", "canonical"),
    [
        ("sicbo", "combination", [5, 2], (2, 5)),
        ("sicbo", "three_singles", [6, 1, 4], (1, 4, 6)),
        ("sicbo", "four_numbers", [6, 5, 3, 2], (2, 3, 5, 6)),
        ("sicbo", "four_numbers", (4, 2, 1, 3), (1, 2, 3, 4)),
        ("thai-hilo", "combination", [6, 1], (1, 6)),
        ("sicbo", "total", [17], (17,)),
        ("thai-hilo", "hi_n", [3], (3,)),
        ("xocdia", "reds", [0], (0,)),
        ("sicbo", "small", [], ()),
        ("thai-hilo", "seq_456", (), ()),
    ],
)
def test_a_valid_pick_gives_its_canonical_wager(
    game: str, kind: str, pick: Sequence[int], canonical: tuple[int, ...]
) -> None:
    assert wager(game, kind, pick) == Wager(game, kind, canonical)


def test_double_and_single_keeps_the_pair_first_and_the_single_second() -> None:
    assert wager("sicbo", "double_and_single", [3, 2]) == Wager(
        "sicbo", "double_and_single", (3, 2)
    )
    assert wager("sicbo", "double_and_single", [2, 3]) == Wager(
        "sicbo", "double_and_single", (2, 3)
    )


@pytest.mark.parametrize(
    ("game", "kind", "pick"),
    [
        # wrong length
        ("sicbo", "single", []),
        ("sicbo", "single", [1, 2]),
        ("sicbo", "combination", [2]),
        ("sicbo", "combination", [2, 3, 4]),
        ("sicbo", "three_singles", [1, 2]),
        ("sicbo", "three_singles", [1, 2, 3, 4]),
        ("sicbo", "double_and_single", [3]),
        ("sicbo", "double_and_single", [1, 2, 3]),
        ("sicbo", "four_numbers", [1, 2, 3]),
        ("sicbo", "four_numbers", [1, 2, 3, 4, 5]),
        ("xocdia", "reds", []),
        ("sicbo", "small", [1]),
        ("sicbo", "any_triple", [3]),
        ("thai-hilo", "hi", [12]),
        ("thai-hilo", "seq_123", [1, 2, 3]),
        ("xocdia", "big", [3]),
        # out of range
        ("sicbo", "single", [0]),
        ("sicbo", "single", [7]),
        ("sicbo", "double", [0]),
        ("sicbo", "triple", [7]),
        ("sicbo", "total", [3]),
        ("sicbo", "total", [18]),
        ("sicbo", "combination", [0, 1]),
        ("sicbo", "combination", [1, 7]),
        ("sicbo", "double_and_single", [0, 1]),
        ("sicbo", "four_numbers", [1, 2, 3, 5]),
        ("sicbo", "four_numbers", [1, 3, 5, 6]),
        ("thai-hilo", "hi_n", [1]),
        ("thai-hilo", "hi_n", [2]),
        ("thai-hilo", "hi_n", [7]),
        ("thai-hilo", "lo_n", [0]),
        ("xocdia", "reds", [5]),
        ("xocdia", "reds", [-1]),
        # repeated where distinct is required
        ("sicbo", "combination", [2, 2]),
        ("thai-hilo", "combination", [4, 4]),
        ("sicbo", "three_singles", [1, 1, 2]),
        ("sicbo", "double_and_single", [3, 3]),
        ("sicbo", "four_numbers", [1, 1, 2, 3]),
        # huge and negative numbers
        ("sicbo", "single", [10**30]),
        ("sicbo", "single", [-1]),
        ("sicbo", "total", [2**64 + 10]),
        ("sicbo", "combination", [-(10**30), 1]),
        ("xocdia", "reds", [2**53]),
        # not integers
        ("sicbo", "single", ["1"]),
        ("sicbo", "single", [1.0]),
        ("sicbo", "single", [None]),
        ("sicbo", "single", [True]),
        ("sicbo", "single", "1"),
        ("sicbo", "single", None),
        ("sicbo", "single", 1),
        # unknown kind
        ("sicbo", "hi", []),
        ("thai-hilo", "small", []),
        ("xocdia", "single", [1]),
        ("sicbo", "", []),
        ("sicbo", "SMALL", []),
        # unknown game
        ("baccarat", "small", []),
        ("SICBO", "small", []),
        ("thai_hilo", "hi", []),
        ("", "small", []),
    ],
)
def test_an_invalid_pick_kind_or_game_gives_none(game: str, kind: str, pick: Any) -> None:
    assert wager(game, kind, pick) is None


@given(
    game=st.sampled_from(GAMES),
    kind=st.sampled_from([w.kind for g in GAMES for w in wagers(g)] + ["", "x"]),
    pick=st.lists(st.integers(), max_size=6),
)
def test_any_list_of_integers_gives_none_or_a_listed_wager(
    game: str, kind: str, pick: list[int]
) -> None:
    found = wager(game, kind, pick)
    assert found is None or found in wagers(game)


@pytest.mark.parametrize("game", GAMES)
def test_any_order_of_distinct_picks_gives_the_same_wager(game: str) -> None:
    for w in wagers(game):
        if w.kind != "double_and_single":
            for order in permutations(w.pick):
                assert wager(game, w.kind, list(order)) == w


@pytest.mark.parametrize("game", GAMES)
def test_every_listed_wager_is_its_own_canonical_form(game: str) -> None:
    for w in wagers(game):
        assert wager(game, w.kind, list(w.pick)) == w


def test_each_game_lists_the_number_of_bets_its_sheet_counts() -> None:
    sicbo = Counter(w.kind for w in wagers("sicbo"))
    # the sheets: 15 specific doubles (combinations), 20 three singles, 30 double and single, 4 sets
    assert sicbo["combination"] == 15
    assert sicbo["three_singles"] == 20
    assert sicbo["double_and_single"] == 30
    assert sicbo["four_numbers"] == 4
    assert sicbo["total"] == 14
    # 4 + 3 * 6 + 1 + 14 + 15 + 2 + 2 + 20 + 30 + 4
    assert len(wagers("sicbo")) == 110
    # 3 + 6 + 15 + 2 + 6 + 4
    assert len(wagers("thai-hilo")) == 36
    # 5 + 5
    assert len(wagers("xocdia")) == 10


def test_wagers_of_an_unknown_game_is_an_error() -> None:
    with pytest.raises(ValueError, match="sicbo, thai-hilo, xocdia"):
        wagers("baccarat")


def test_verdict_refuses_a_wager_that_does_not_exist() -> None:
    with pytest.raises(ValueError):
        verdict(Wager("sicbo", "single", (7,)), (1, 2, 3))
    with pytest.raises(ValueError):
        verdict(Wager("sicbo", "hi", ()), (1, 2, 3))
    with pytest.raises(ValueError):
        verdict(Wager("sicbo", "combination", (5, 2)), (1, 2, 5))


def test_verdict_refuses_an_outcome_that_cannot_happen_in_the_game() -> None:
    small = wager("sicbo", "small", [])
    big = wager("xocdia", "big", [])
    assert small is not None and big is not None
    for dice in [(0, 1, 2), (1, 2, 7), (1, 2), (1, 2, 3, 4)]:
        with pytest.raises(ValueError):
            verdict(small, dice)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        verdict(small, ("red", "red", "red", "red"))
    with pytest.raises(ValueError):
        verdict(big, (1, 2, 3))
    with pytest.raises(ValueError):
        verdict(big, ("red", "red", "red", "blue"))


@given(
    w=st.sampled_from([w for g in ("sicbo", "thai-hilo") for w in wagers(g)]),
    dice=st.sampled_from(outcomes("sicbo")),
)
def test_the_order_the_dealer_enters_the_dice_does_not_change_the_verdict(
    w: Wager, dice: tuple[int, int, int]
) -> None:
    a, b, c = dice
    assert len({verdict(w, d) for d in [(a, b, c), (c, b, a), (b, c, a), (c, a, b)]}) == 1


def test_verdict_is_memoized_per_canonical_outcome() -> None:
    w = wager("thai-hilo", "seq_123", [])
    assert w is not None
    assert verdict(w, (1, 2, 3)) is verdict(w, (3, 2, 1))


@pytest.mark.parametrize("game", GAMES)
def test_the_odds_board_pays_what_the_verdict_pays_for_every_pick_outcome_and_awkward_stake(
    game: str,
) -> None:
    stakes = (1, 3, 7, 19, 99, 101, 2**53 - 1)
    for outcome in outcomes(game):
        board = odds_board(game, outcome)
        assert len(board) == len(accepted_picks(game))
        for kind, pick in accepted_picks(game):
            found = wager(game, kind, pick)
            assert found is not None
            expected = verdict(found, outcome)
            assert board[kind, pick][0] == expected.result
            for stake in stakes:
                assert pay(stake, board[kind, pick]) == payout(stake, expected)


def test_the_odds_board_has_no_pick_that_is_not_a_wager() -> None:
    board = odds_board("sicbo", (1, 2, 3))
    assert ("single", (4,)) in board
    assert ("single", (7,)) not in board
    assert ("double_and_single", (3, 1)) in board
    assert ("total", (3,)) not in board  # totals 4 to 17 only
    assert ("single", (4, 4)) not in board


def test_the_odds_board_of_an_unknown_game_is_an_error() -> None:
    with pytest.raises(ValueError, match="unknown game"):
        odds_board("roulette", (1, 2, 3))


def accepted_picks(game: str) -> set[tuple[str, tuple[int, ...]]]:
    """Every (kind, pick) of the game in every order a bet may carry it."""
    return {
        (w.kind, order)
        for w in wagers(game)
        for order in (set(permutations(w.pick)) if w.kind != "double_and_single" else [w.pick])
    }


@pytest.mark.parametrize(
    ("stake", "odds", "credit"),
    [
        (100, ("win", 1, 1), 200),
        (101, ("win", 1, 2), 151),  # 101 + floor(50.5)
        (7, ("win", 150, 1), 1057),
        (100, ("push", 0, 1), 100),
        (100, ("lose", -1, 1), 0),
    ],
)
def test_a_decided_bet_is_credited_its_stake_and_the_floor_of_its_odds_in_minor_units(
    stake: int, odds: tuple[Any, int, int], credit: int
) -> None:
    assert pay(stake, odds) == credit
