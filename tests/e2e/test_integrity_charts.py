"""The integrity charts in headless Chromium: a board charts its table's outcomes against the fair
distribution, and `croupier integrity --html` shows every test's figures and chart; both the
figures of the integrity tests over the same rounds (screenshots in test-output/)."""

from __future__ import annotations

import subprocess
import sys
from fractions import Fraction
from typing import Any

from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.ui import WebDriverWait

from services.settings import Settings
from services.settlement.fold import DEFAULT_HORIZON
from services.statistics.command import examined
from services.statistics.integrity import Examined
from tests.e2e.conftest import floor
from tests.e2e.support import get
from tests.kafka import OUTPUT, ROOT


def offline() -> dict[tuple[str, str, str], Examined]:
    """`croupier integrity`'s tests of the boards' floor, by (scope, id, test)."""
    found = examined((raw for _, raw in floor().tagged()), horizon=DEFAULT_HORIZON)
    return {(e.finding.scope, e.finding.id, e.test): e for e in found}


def chart(driver: WebDriver) -> dict[str, Any]:
    """The board's chart as drawn: its bars' classes, counts and heights, its fair marks' counts
    (as the page wrote them, `expected/denominator`)."""
    svg = driver.find_element(By.CSS_SELECTOR, "#fair svg")
    bars = svg.find_elements(By.CSS_SELECTOR, "rect.observed")
    marks = svg.find_elements(By.CSS_SELECTOR, "line.fair")
    return {
        "rounds": int(str(svg.get_attribute("data-rounds"))),
        "classes": [b.get_attribute("data-class") for b in bars],
        "counts": [int(str(b.get_attribute("data-count"))) for b in bars],
        "heights": [float(b.rect["height"]) for b in bars],  # as drawn, styles applied
        "fair": [Fraction(str(m.get_attribute("data-expected"))) for m in marks],
    }


def title(driver: WebDriver) -> str:
    """The chart's heading as written (the page shows headings in capitals)."""
    return str(driver.find_element(By.ID, "fair-title").get_attribute("textContent"))


def snap(driver: WebDriver, name: str) -> None:
    """A screenshot with the chart in view."""
    section = driver.find_element(By.ID, "fair-section")
    driver.execute_script("arguments[0].scrollIntoView({block: 'end'})", section)
    driver.save_screenshot(str(OUTPUT / name))


def board_chart(driver: WebDriver, board: str, rounds: int) -> dict[str, Any]:
    """The chart of the board at this URL, once it shows a window of `rounds` counted rounds."""

    def shown(driver: WebDriver) -> bool:
        svgs = driver.find_elements(By.CSS_SELECTOR, "#fair svg")
        return bool(svgs) and svgs[0].get_attribute("data-rounds") == str(rounds)

    driver.get(board)
    WebDriverWait(driver, 30, poll_frequency=0.2).until(shown)
    return chart(driver)


def test_the_xocdia_board_charts_its_reds_against_the_binomial_as_the_integrity_test_counts(
    browser: WebDriver, board: tuple[Settings, str]
) -> None:
    _, url = board
    tested = offline()[("table", "T002", "reds")]
    d = tested.distribution
    n = tested.finding.rounds  # the rounds with a result, none cancelled or voided
    assert 50 < n <= 70
    status, served = get(f"{url}/tables/T002/distribution")
    assert status == 200
    assert (served["test"], served["counts"], served["rounds"]) == ("reds", d.counts, n)
    assert (served["expected"], served["denominator"]) == (d.expected, d.denominator)
    binomial = [Fraction(n * ways, 16) for ways in (1, 4, 6, 4, 1)]  # n C(4, k) / 16
    assert [Fraction(e, d.denominator) for e in d.expected] == binomial
    drawn = board_chart(browser, f"{url}/tables/T002", n)
    assert drawn["classes"] == ["0", "1", "2", "3", "4"]
    assert drawn["counts"] == d.counts
    assert drawn["fair"] == binomial
    top = max(d.counts)  # bar heights in proportion to the counts
    tallest = max(drawn["heights"])
    assert [round(h * top / tallest) for h in drawn["heights"]] == d.counts
    assert title(browser) == "Red discs against the fair distribution"
    snap(browser, "board-T002-fair.png")


def test_the_sicbo_board_charts_every_die_of_its_window(
    browser: WebDriver, board: tuple[Settings, str]
) -> None:
    _, url = board
    status, served = get(f"{url}/tables/T000/distribution")
    assert status == 200
    drawn = board_chart(browser, f"{url}/tables/T000", served["rounds"])
    assert drawn["classes"] == ["1", "2", "3", "4", "5", "6"]
    assert drawn["counts"] == served["counts"]
    assert sum(drawn["counts"]) == 3 * served["rounds"]
    half = Fraction(served["rounds"], 2)  # 3n dice, a sixth of them each face
    assert drawn["fair"] == [half] * 6
    assert title(browser) == "Faces against the fair distribution"
    snap(browser, "board-T000-fair.png")


def test_the_html_report_shows_a_row_and_a_chart_per_test_and_the_boards_figures(
    browser: WebDriver, board: tuple[Settings, str]
) -> None:
    _, url = board
    OUTPUT.mkdir(exist_ok=True)
    inputs = OUTPUT / "integrity-floor.jsonl"
    inputs.write_bytes(b"\n".join(raw for _, raw in floor().tagged()) + b"\n")
    report = OUTPUT / "integrity-report.html"
    subprocess.run(
        [sys.executable, "-m", "services.cli", "integrity", str(inputs), "--html", str(report)],
        capture_output=True,
        cwd=ROOT,
        check=True,
    )
    browser.get(report.as_uri())
    assert browser.title == "Outcome integrity"
    rows = browser.find_elements(By.CSS_SELECTOR, "#findings tbody tr")
    cells = [[td.text for td in row.find_elements(By.TAG_NAME, "td")] for row in rows]
    tests = offline()
    assert [(c[0], c[1], c[3]) for c in cells] == list(tests)
    assert [c[4:] for c in cells] == [
        [str(f.rounds), f"{f.statistic:.2f}", str(f.df), f"{f.p_value:.3g}", f.verdict]
        for f in (e.finding for e in tests.values())
    ]
    tables = [(c[1], c[2], c[3], c[8]) for c in cells if c[0] == "table"]
    assert tables == [
        ("T000", "sicbo", "faces", "too_few"),  # 70 rounds a table, some cancelled: under 100
        ("T000", "sicbo", "totals", "too_few"),
        ("T001", "thai-hilo", "faces", "too_few"),
        ("T001", "thai-hilo", "totals", "too_few"),
        ("T002", "xocdia", "reds", "too_few"),
    ]
    _, served = get(f"{url}/tables/T002/distribution")
    assert served["rounds"] == tests[("table", "T002", "reds")].finding.rounds  # as the board
    figures = browser.find_elements(By.CSS_SELECTOR, ".charts figure")
    assert len(figures) == len(rows)
    for figure, e in zip(figures, tests.values(), strict=True):
        anchor = figure.get_attribute("id")
        bars = figure.find_elements(By.CSS_SELECTOR, f"svg g[id^='{anchor}-bar-']")
        assert [b.get_attribute("id") for b in bars] == [
            f"{anchor}-bar-{name}" for name in e.distribution.classes
        ]
        assert figure.find_elements(By.CSS_SELECTOR, f"svg g[id='{anchor}-fair'] path")
    browser.save_screenshot(str(OUTPUT / "integrity-report.png"))
