"""The statistics board in headless Chromium: it shows the last 50 results and updates live."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from kafka import KafkaProducer  # type: ignore[import-untyped]
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.ui import WebDriverWait

from services.settings import Settings
from tests.e2e.support import get
from tests.kafka import OUTPUT


def live_round(settings: Settings, table_id: str, round_id: str, dice: list[int]) -> None:
    """A whole Sic Bo round, as the table's game service publishes it, with one bet."""
    base: dict[str, Any] = {"v": 1, "table_id": table_id, "round_id": round_id}
    events = [
        ("rounds", {"type": "round.opened", "game": "sicbo"}),
        ("bets", {"type": "bet.placed", "bet_id": f"{round_id}-b1", "player_id": "P-LIVE",
                  "seq": 1, "kind": "big", "pick": [], "stake": 500, "currency": "EUR"}),
        ("rounds", {"type": "round.betting_closed", "last_seq": 1}),
        ("rounds", {"type": "round.result", "dice": dice}),
    ]  # fmt: skip
    producer = KafkaProducer(bootstrap_servers=settings.kafka_bootstrap, acks="all")
    topics = {"rounds": settings.topic_rounds, "bets": settings.topic_bets}
    try:
        for n, (topic, body) in enumerate(events):
            event = {
                **base,
                **body,
                "event_id": f"{round_id}-e{n}",
                "at": f"2026-12-01T20:00:0{n}Z",
            }
            producer.send(topics[topic], key=table_id.encode(), value=msgspec.json.encode(event))
        producer.flush()
    finally:
        producer.close()


def shown_round(driver: WebDriver) -> str:
    return str(driver.find_element(By.ID, "latest").get_attribute("data-round-id"))


def count_text(driver: WebDriver, name: str) -> str:
    return str(driver.find_element(By.CSS_SELECTOR, f'#counts .row[data-name="{name}"] .num').text)


def test_the_board_shows_the_last_50_results_and_a_new_result_appears_live(
    browser: WebDriver, board: tuple[Settings, str]
) -> None:
    settings, url = board
    _, before = get(f"{url}/tables/T000/stats")
    browser.get(f"{url}/tables/T000")
    wait = WebDriverWait(browser, 30, poll_frequency=0.2)
    wait.until(lambda d: shown_round(d) == before["rounds"][0]["round_id"])
    assert len(browser.find_elements(By.CSS_SELECTOR, "#road .cell")) == 50
    assert browser.find_element(By.ID, "game").text == "Sic Bo"
    big = before["counts"]["big"]
    assert count_text(browser, "Big") == f"{big} · {round(big * 100 / 50)}%"
    browser.save_screenshot(str(OUTPUT / "board-sicbo-before.png"))

    live_round(settings, "T000", "T000-LIVE-1", [6, 5, 4])  # 15: big, odd
    wait.until(lambda d: shown_round(d) == "T000-LIVE-1")
    _, after = get(f"{url}/tables/T000/stats")
    assert after["rounds"][0] == {"round_id": "T000-LIVE-1", "dice": [6, 5, 4]}
    newest = browser.find_elements(By.CSS_SELECTOR, "#road .cell")[-1]
    assert newest.get_attribute("data-round-id") == "T000-LIVE-1"
    assert "newest" in str(newest.get_attribute("class"))
    assert (
        count_text(browser, "Big")
        == f"{after['counts']['big']} · {round(after['counts']['big'] * 2)}%"
    )
    hot = [
        f.get_attribute("data-face") for f in browser.find_elements(By.CSS_SELECTOR, ".face.hot")
    ]
    faces = after["counts"]["faces"]
    assert hot == [face for face, n in faces.items() if n == max(faces.values())]
    browser.save_screenshot(str(OUTPUT / "board-sicbo-live.png"))


@pytest.mark.parametrize(("table_id", "game"), [("T001", "Thai HiLo"), ("T002", "Xoc Dia")])
def test_the_other_games_boards_show_their_own_counts(
    browser: WebDriver, board: tuple[Settings, str], table_id: str, game: str
) -> None:
    _, url = board
    _, stats = get(f"{url}/tables/{table_id}/stats")
    browser.get(f"{url}/tables/{table_id}")
    WebDriverWait(browser, 30).until(lambda d: shown_round(d) == stats["rounds"][0]["round_id"])
    assert browser.find_element(By.ID, "game").text == game
    counts = stats["counts"]
    if table_id == "T001":
        assert count_text(browser, "11") == f"{counts['eleven']} · {counts['eleven'] * 2}%"
        assert len(browser.find_elements(By.CSS_SELECTOR, "#road .cell .die")) == 150
    else:
        assert count_text(browser, "4 red") == f"{counts['reds']['4']} · {counts['reds']['4'] * 2}%"
        assert len(browser.find_elements(By.CSS_SELECTOR, "#road .cell .disc")) == 200
    browser.save_screenshot(str(OUTPUT / f"board-{table_id}.png"))
