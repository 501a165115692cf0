"""The 50-round statistics board (contract section 5, `table_stats`)."""

from __future__ import annotations

from services.settlement.fold import Fold
from tests.unit.builders import round_event, rounds, run


def _play(fold: Fold, game: str, results: list[dict[str, object]], table_id: str = "T1") -> None:
    for n, outcome in enumerate(results):
        rid = f"R{n}"
        run(
            [
                ("rounds", round_event("opened", rid, table_id, game=game)),
                ("rounds", round_event("betting_closed", rid, table_id, last_seq=0)),
                ("rounds", round_event("result", rid, table_id, **outcome)),
            ],
            fold,
        )


def test_a_table_without_results_has_no_board() -> None:
    fold = Fold()
    run(rounds(round_event("opened", game="sicbo"), round_event("cancelled")), fold)
    assert fold.stats("T1") is None
    assert fold.stats("nowhere") is None


def test_sicbo_counts_worked_by_hand() -> None:
    fold = Fold()
    _play(
        fold,
        "sicbo",
        [{"dice": [1, 2, 3]}, {"dice": [6, 6, 6]}, {"dice": [4, 5, 6]}, {"dice": [2, 2, 1]}],
    )
    stats = fold.stats("T1")
    assert stats is not None
    assert [r.round_id for r in stats.rounds] == ["R3", "R2", "R1", "R0"]
    assert stats.rounds[0].dice == (2, 2, 1)
    c = stats.counts
    assert {k: c[k] for k in ("big", "small", "odd", "even", "triple")} == {
        "big": 1,
        "small": 2,
        "odd": 2,
        "even": 1,
        "triple": 1,
    }
    assert c["faces"] == {"1": 2, "2": 2, "3": 1, "4": 1, "5": 1, "6": 2}
    totals = c["totals"]
    assert isinstance(totals, dict)
    assert list(totals) == [str(t) for t in range(3, 19)]
    assert {k: v for k, v in totals.items() if v} == {"5": 1, "6": 1, "15": 1, "18": 1}


def test_thai_hilo_counts_hi_lo_and_eleven() -> None:
    fold = Fold()
    _play(
        fold,
        "thai-hilo",
        [{"dice": [5, 5, 1]}, {"dice": [6, 6, 6]}, {"dice": [1, 1, 1]}, {"dice": [3, 4, 4]}],
    )
    stats = fold.stats("T1")
    assert stats is not None
    assert {k: stats.counts[k] for k in ("hi", "lo", "eleven")} == {"hi": 1, "lo": 1, "eleven": 2}


def test_xocdia_counts_reds_and_pushes_two_reds_out_of_big_and_small() -> None:
    fold = Fold()
    r, w = "red", "white"
    _play(
        fold, "xocdia", [{"discs": [r, r, w, w]}, {"discs": [r, r, r, r]}, {"discs": [w, r, w, w]}]
    )
    stats = fold.stats("T1")
    assert stats is not None
    assert stats.counts == {
        "reds": {"0": 0, "1": 1, "2": 1, "3": 0, "4": 1},
        "odd": 1,
        "even": 2,
        "big": 1,
        "small": 1,
    }


def test_the_board_keeps_only_the_last_fifty_rounds_newest_first() -> None:
    fold = Fold()
    _play(fold, "sicbo", [{"dice": [1 + n % 6, 2, 3]} for n in range(53)])
    stats = fold.stats("T1")
    assert stats is not None
    assert len(stats.rounds) == 50
    assert stats.rounds[0].round_id == "R52"
    assert stats.rounds[-1].round_id == "R3"
    totals = stats.counts["totals"]
    assert isinstance(totals, dict)
    assert sum(totals.values()) == 50


def test_cancelled_rounds_never_reach_the_board() -> None:
    fold = Fold()
    _play(fold, "sicbo", [{"dice": [1, 2, 3]}])
    run(rounds(round_event("opened", "X", game="sicbo"), round_event("cancelled", "X")), fold)
    stats = fold.stats("T1")
    assert stats is not None
    assert [r.round_id for r in stats.rounds] == ["R0"]
