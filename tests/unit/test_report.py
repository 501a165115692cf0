"""The regulator's report, checked by hand on a worked example."""

from __future__ import annotations

import csv
import io
import json
from fractions import Fraction

from services.reports.command import build
from services.reports.figures import percent
from services.reports.render import as_csv, as_json, as_text
from tests.unit.builders import bet, round_event

DAY1 = "2026-11-29T12:00:00Z"
DAY2 = "2026-11-30T00:10:00Z"


def _lines() -> list[bytes]:
    """R1: alice big 100 wins 200, bob small 100 loses, carol's late 50 is refunded; corrected on
    the next day to 1-2-3 (alice -200, bob +200). R2: cancelled, dave's 30 refunded. R3: eve big
    100 wins 200, voided on the next day (-100)."""
    lines = [
        round_event("opened", "R1", game="sicbo", at=DAY1),
        bet(1, "big", stake=100, round_id="R1", player_id="alice"),
        bet(2, "small", stake=100, round_id="R1", player_id="bob"),
        round_event("betting_closed", "R1", last_seq=2, at=DAY1),
        bet(3, "big", stake=50, round_id="R1", player_id="carol"),
        round_event("result", "R1", dice=[4, 5, 6], at=DAY1),
        round_event("opened", "R2", game="sicbo", at=DAY1),
        bet(1, "big", stake=30, round_id="R2", player_id="dave"),
        round_event("cancelled", "R2", at=DAY1),
        round_event("opened", "R3", game="sicbo", at=DAY1),
        bet(1, "big", stake=100, round_id="R3", player_id="eve"),
        round_event("betting_closed", "R3", last_seq=1, at=DAY1),
        round_event("result", "R3", dice=[6, 6, 5], at=DAY1),
        round_event(
            "corrected", "R1", dice=[1, 2, 3], reason="misread", authorized_by="ana", at=DAY2
        ),
        round_event("voided", "R3", reason="shaker fault", authorized_by="bo", at=DAY2),
    ]
    return [*lines, b"not json"]  # a rejected line is no figure


def test_the_worked_report_has_the_figures_counted_by_hand() -> None:
    data = json.loads(as_json(build(_lines(), horizon=200)))
    assert data["rounds"] == [
        {"table_id": "T1", "game": "sicbo", "day": "2026-11-29", "results": 2, "cancelled": 1,
         "corrected": 0, "voided": 0},
        {"table_id": "T1", "game": "sicbo", "day": "2026-11-30", "results": 0, "cancelled": 0,
         "corrected": 1, "voided": 1},
    ]  # fmt: skip
    day1, day2 = data["money"]
    assert day1 == {
        "table_id": "T1",
        "game": "sicbo",
        "day": "2026-11-29",
        "currency": "EUR",
        "bets": 5,
        "stakes": 380,
        "refunds": 80,
        "payouts": 400,
        "adjustments": 0,
        "ggr": -100,
        "rtp_percent": "133.3333",
        "theoretical_rtp_percent": "97.2222",  # big and small: 210/216 each
    }
    assert (day2["bets"], day2["stakes"], day2["payouts"], day2["adjustments"]) == (0, 0, -100, 3)
    assert (day2["ggr"], day2["rtp_percent"]) == (100, "")
    assert [
        (c["round_id"], c["n"], c["cause"], c["authorized_by"]) for c in data["corrections"]
    ] == [
        ("R1", 1, "correction", "ana"),
        ("R3", 1, "void", "bo"),
    ]
    assert data["corrections"][0]["before"] == [4, 5, 6]
    assert data["corrections"][0]["after"] == [1, 2, 3]
    assert data["corrections"][1]["before"] == [6, 6, 5] and "after" not in data["corrections"][1]


def test_the_csv_and_the_text_carry_the_same_figures() -> None:
    report = build(_lines(), horizon=200)
    sections = as_csv(report).split("\n\n")
    money = list(csv.DictReader(io.StringIO(sections[1].split("\n", 1)[1])))
    assert [(m["day"], m["ggr"], m["rtp_percent"]) for m in money] == [
        ("2026-11-29", "-100", "133.3333"),
        ("2026-11-30", "100", ""),
    ]
    text = as_text(report)
    assert "133.3333" in text and "97.2222" in text
    assert "R1 #1 correction: 4-5-6 -> 1-2-3  authorised by ana: misread" in text
    assert "R3 #1 void: 6-6-5 -> void  authorised by bo: shaker fault" in text


def test_percentages_are_exact_and_rounded_half_away_from_zero() -> None:
    assert percent(Fraction(35, 36)) == "97.2222"
    assert percent(Fraction(1, 3), places=2) == "33.33"
    assert percent(Fraction(2, 3), places=2) == "66.67"
    assert percent(Fraction(-1, 8), places=1) == "-12.5"
    assert percent(Fraction(1, 200000), places=4) == "0.0005"
    assert percent(None) == ""
