"""The PAR sheet: exact enumeration of every game against the sheets' figures, worked by hand."""

import json
from collections import Counter
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from services.games import (
    GAMES,
    Verdict,
    Wager,
    outcomes,
    par_sheet,
    payout,
    render_json,
    render_text,
    verdict,
    wagers,
)
from services.games.par import main
from services.games.sheet import Line, ParSheet
from services.games.sheet_render import percent

MAX = 2**53 - 1


def row(sheet: ParSheet, kind: str, *pick: int) -> Line:
    return next(x for x in sheet.lines if x.wager == Wager(sheet.game, kind, pick))


def test_the_dice_games_have_216_equally_likely_ordered_outcomes() -> None:
    for game in ("sicbo", "thai-hilo"):
        assert len(outcomes(game)) == 216
        assert len(set(outcomes(game))) == 216
        assert all(isinstance(d, int) and 1 <= d <= 6 for dice in outcomes(game) for d in dice)


def test_xoc_dia_has_16_equally_likely_ordered_outcomes() -> None:
    assert len(outcomes("xocdia")) == 16
    assert len(set(outcomes("xocdia"))) == 16
    reds = Counter(discs.count("red") for discs in outcomes("xocdia"))
    assert reds == {0: 1, 1: 4, 2: 6, 3: 4, 4: 1}


def test_sic_bo_returns_at_most_the_sheets_97_22_percent() -> None:
    # totals 4..10: 108 outcomes of totals 3..10 less the one of total 3, less triples 2,2,2 and
    # 3,3,3: 105 wins of 216, each paying 2: 210/216 = 35/36 = 97.2222...%
    sheet = par_sheet("sicbo")
    assert sheet.max_rtp == Fraction(35, 36)
    assert percent(sheet.max_rtp, 2) == "97.22"
    assert {w.kind for w in sheet.best} == {"small", "big", "odd", "even"}


def test_thai_hilo_returns_at_most_the_sheets_97_50_percent() -> None:
    # lo wins on half of the outcomes (totals 3..10 mirror 11..18) and pays 1.95: 39/40 = 97.5%
    sheet = par_sheet("thai-hilo")
    assert sheet.max_rtp == Fraction(39, 40)
    assert percent(sheet.max_rtp) == "97.5000"
    assert [w.kind for w in sheet.best] == ["lo"]


def test_xoc_dia_returns_at_most_the_sheets_98_75_percent() -> None:
    # big: 5/16 win at 1.96, 6/16 push: (5 * 49/25 + 6) / 16 = 79/80 = 98.75%
    sheet = par_sheet("xocdia")
    assert sheet.max_rtp == Fraction(79, 80)
    assert percent(sheet.max_rtp) == "98.7500"
    assert {w.kind for w in sheet.best} == {"big", "small"}


def test_rows_match_their_hand_counts() -> None:
    sicbo, thai, xoc = par_sheet("sicbo"), par_sheet("thai-hilo"), par_sheet("xocdia")
    # a face shows once on 75 outcomes, twice on 15, thrice on 1: (75*2 + 15*3 + 1*4) / 216
    assert row(sicbo, "single", 2).rtp == Fraction(199, 216)
    assert row(sicbo, "single", 2).win == Fraction(91, 216)
    # 3 ordered ways to roll 1,1,2: 3/216 * 61
    assert row(sicbo, "total", 4).rtp == Fraction(61, 72)
    # 4 triples of 3 from the set, 6 orders each: 24/216 * 8
    assert row(sicbo, "four_numbers", 2, 3, 5, 6).rtp == Fraction(8, 9)
    # exactly two odd dice: 3 * 3 * 3 * 3 = 81 outcomes paying 2.5
    assert row(sicbo, "two_odd_one_even").rtp == Fraction(15, 16)
    # totals 12..18: 81 outcomes paying 2.1
    assert row(thai, "hi").win == Fraction(3, 8)
    assert row(thai, "hi").rtp == Fraction(63, 80)
    # 6 orders of 1,2,3 pay 6; 3 pairs * 24 outcomes show exactly that pair of 1,2,3 and pay 2
    assert row(thai, "seq_123").win == Fraction(78, 216)
    assert row(thai, "seq_123").rtp == Fraction(5, 6)
    # one 6 and two dice summing to 4 or less: 3 places * 6 pairs = 18 outcomes paying 11
    assert row(thai, "lo_n", 6).rtp == Fraction(11, 12)
    big = row(xoc, "big")
    assert (big.win, big.push, big.lose) == (Fraction(5, 16), Fraction(6, 16), Fraction(5, 16))
    assert big.edge == Fraction(1, 80)
    # one red of four: 4/16 at 3.8
    assert row(xoc, "reds", 1).rtp == Fraction(19, 20)


@pytest.mark.parametrize("game", GAMES)
def test_every_row_accounts_for_every_outcome(game: str) -> None:
    sheet = par_sheet(game)
    assert [x.wager for x in sheet.lines] == list(wagers(game))
    for x in sheet.lines:
        assert x.win + x.lose + x.push == 1
        assert x.rtp + x.edge == 1
        assert x.rtp <= sheet.max_rtp


def test_floor_rounding_at_stake_1_halves_what_lo_returns() -> None:
    # a win at stake 1 pays 1 + floor(19/20) = 1: half the time 1, else 0
    lo = row(par_sheet("thai-hilo", 1), "lo")
    assert lo.rtp_at_stake == Fraction(1, 2)
    assert lo.rtp == Fraction(39, 40)


def test_floor_rounding_at_stake_21_costs_lo_a_little() -> None:
    # a win at 21 pays 40: 1/2 * 40 / 21
    assert row(par_sheet("thai-hilo", 21), "lo").rtp_at_stake == Fraction(20, 21)


def test_a_stake_that_is_a_multiple_of_every_denominator_pays_the_exact_rtp() -> None:
    for game in GAMES:
        assert all(x.rtp_at_stake == x.rtp for x in par_sheet(game, 100).lines)


def test_without_a_stake_the_sheet_has_no_rounded_rtp() -> None:
    assert all(x.rtp_at_stake is None for x in par_sheet("xocdia").lines)


@pytest.mark.parametrize(
    ("game", "minimum"),
    [
        # 3:2 on 3/8 of outcomes: at an odd stake N rounding takes 3/16 / N; 3/16 / N > 1/10000
        # while N < 1875, and the last odd stake below it is 1873
        ("sicbo", 1874),
        # lo at 19:20 on 1/2: at N = 1 (mod 20) rounding takes 19/40 / N, more than 1/10000
        # while N < 4750; the last such N is 4741; hi (N = 9 mod 10, 27/80 / N) stops at 3369
        ("thai-hilo", 4742),
        # odd / even at 24:25 on 1/2: at N = 1 (mod 25) 12/25 / N, over 1/10000 while N < 4800;
        # the last such N is 4776 (N = 2 mod 25: 23/50 / N stops below 4600)
        ("xocdia", 4777),
    ],
)
def test_minimum_stake_is_where_rounding_stays_within_a_hundredth_of_a_point(
    game: str, minimum: int
) -> None:
    assert par_sheet(game).min_stake == minimum


@pytest.mark.parametrize("game", GAMES)
def test_paying_real_bets_agrees_with_the_minimum_stake(game: str) -> None:
    """By brute force with verdict() and payout(): one stake below the minimum some wager falls
    more than 0.01 point short of its exact RTP (taken at stake 100, a multiple of every odds
    denominator); from the minimum on, for four whole periods of 25, none does."""
    every = outcomes(game)
    tallies = [Counter(verdict(w, o) for o in every) for w in wagers(game)]

    def rtp(tally: Counter[Verdict], stake: int) -> Fraction:
        return Fraction(sum(n * payout(stake, v) for v, n in tally.items()), stake * len(every))

    def short(stake: int) -> bool:
        return any(rtp(t, 100) - rtp(t, stake) > Fraction(1, 10_000) for t in tallies)

    minimum = par_sheet(game).min_stake
    assert short(minimum - 1)
    assert not any(short(stake) for stake in range(minimum, minimum + 100))


@pytest.mark.parametrize(
    ("x", "shown"),
    [
        (Fraction(35, 36), "97.2222"),
        (Fraction(2, 3), "66.6667"),
        (Fraction(1, 3), "33.3333"),
        (Fraction(5, 10**7), "0.0001"),
        (Fraction(49, 10**7), "0.0005"),
        (Fraction(0), "0.0000"),
        (Fraction(1), "100.0000"),
        (Fraction(-1, 80), "-1.2500"),
    ],
)
def test_percentages_show_four_decimals_rounded_half_up(x: Fraction, shown: str) -> None:
    assert percent(x) == shown


def test_the_text_sheet_shows_each_wager_and_the_figures() -> None:
    shown = render_text(par_sheet("thai-hilo", 1))
    lo = next(line for line in shown.splitlines() if line.startswith("lo "))
    assert lo.split() == [
        "lo",
        "-",
        "19:20",
        "50.0000%",
        "50.0000%",
        "0.0000%",
        "97.5000%",
        "2.5000%",
        "50.0000%",
        "4742",
    ]
    assert "RTP at 1" in shown
    assert "maximum RTP: 97.5000% (39/40): lo" in shown
    assert "minimum stake: 4742" in shown


def test_the_json_sheet_gives_fractions_and_percentages() -> None:
    data = json.loads(render_json(par_sheet("xocdia", 7)))
    assert data["game"] == "xocdia"
    assert data["outcomes"] == 16
    assert data["stake"] == 7
    assert data["max_rtp"] == {"fraction": "79/80", "percent": "98.7500"}
    assert data["min_stake"] == 4777
    assert data["best"] == [{"kind": "big", "pick": []}, {"kind": "small", "pick": []}]
    big = next(w for w in data["wagers"] if w["kind"] == "big")
    assert big["odds"] == ["24:25"]
    assert big["push"] == {"fraction": "3/8", "percent": "37.5000"}
    # a win at 7 pays 13: (5 * 13 + 6 * 7) / (16 * 7) = 107/112
    assert big["rtp_at_stake"] == {"fraction": "107/112", "percent": "95.5357"}
    assert len(data["wagers"]) == 10


def test_par_command_prints_the_text_sheet(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["xocdia"]) == 0
    out = capsys.readouterr().out
    assert "maximum RTP: 98.7500% (79/80): big, small" in out


def test_par_command_prints_json_at_a_stake(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sicbo", "--stake", "3", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    two_odd = next(w for w in data["wagers"] if w["kind"] == "two_odd_one_even")
    # a win at 3 pays 7 on 3/8 of outcomes: 21/24
    assert two_odd["rtp_at_stake"]["fraction"] == "7/8"


def test_par_command_names_the_valid_games_for_an_unknown_one(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as exit:
        main(["baccarat"])
    assert exit.value.code == 2
    err = capsys.readouterr().err
    assert "'sicbo'" in err and "'thai-hilo'" in err and "'xocdia'" in err


@pytest.mark.parametrize("stake", ["0", "-5", "x", str(2**53)])
def test_par_command_refuses_a_stake_outside_the_contract(
    stake: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit:
        main(["sicbo", "--stake", stake])
    assert exit.value.code == 2
    assert "--stake" in capsys.readouterr().err


def test_par_sheet_refuses_an_unknown_game_or_a_stake_below_one() -> None:
    with pytest.raises(ValueError, match="sicbo, thai-hilo, xocdia"):
        par_sheet("baccarat")
    with pytest.raises(ValueError):
        par_sheet("sicbo", 0)


odds = st.sampled_from([(1, 1), (3, 2), (11, 10), (19, 20), (9, 5), (24, 25), (14, 5), (13, 2)])


@given(
    stake=st.integers(1, MAX),
    num_den=odds | st.tuples(st.integers(0, 10**6), st.integers(1, 10**6)),
)
def test_a_win_pays_an_integer_between_the_stake_and_the_exact_odds(
    stake: int, num_den: tuple[int, int]
) -> None:
    num, den = num_den
    paid = payout(stake, Verdict("win", num, den))
    assert type(paid) is int
    assert stake <= paid
    assert paid * den <= stake * (den + num) < (paid + 1) * den


@given(stake=st.integers(1, MAX), num_den=odds)
def test_a_loss_pays_nothing_and_a_push_returns_the_stake(
    stake: int, num_den: tuple[int, int]
) -> None:
    assert payout(stake, Verdict("lose")) == 0
    assert payout(stake, Verdict("push")) == stake
    num, den = num_den
    for v in (Verdict("lose"), Verdict("push"), Verdict("win", num, den)):
        paid = payout(stake, v)
        assert type(paid) is int
        assert 0 <= paid * den <= stake * (den + num)
