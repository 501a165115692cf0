"""End-to-end tests run the whole system on a real Kafka broker; without one they fail and say so.
The boards' tests share one floor and one browser."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.remote.webdriver import WebDriver

from services.settings import Settings
from services.simulation.streams import Streams, generate
from tests.e2e.support import read_side, wait_read_up
from tests.kafka import (
    ROOT,
    create_topics,
    isolated_settings,
    publish,
    session_broker,
    wait_caught_up,
    workers,
)


@pytest.fixture(scope="session")
def kafka() -> Iterator[str]:
    with session_broker() as address:
        yield address


CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1400,1000",
)


@pytest.fixture(scope="session")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebDriver]:
    """Headless Chromium from Debian (deploy/browser.sh installs it once), fresh profile."""
    setup = subprocess.run([str(ROOT / "deploy" / "browser.sh")], capture_output=True, text=True)
    if setup.returncode != 0:
        pytest.fail(f"deploy/browser.sh failed: {setup.stderr}", pytrace=False)
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}")
    driver = webdriver.Chrome(options=options, service=Service(executable_path=CHROMEDRIVER))
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture(scope="session")
def board(kafka: str) -> Iterator[tuple[Settings, str]]:
    """Three tables (Sic Bo, Thai HiLo, Xoc Dia) of 70 rounds, a worker and the read side running."""
    settings = isolated_settings(kafka, partitions=2)
    create_topics(settings)
    publish(settings, floor(), seed=9)
    with workers(settings, 1), read_side(settings) as url:
        wait_caught_up(settings)
        wait_read_up(url)
        yield settings, url


def floor() -> Streams:
    """The boards' floor: three tables (Sic Bo, Thai HiLo, Xoc Dia) of 70 rounds, the same on each
    call."""
    return generate(9, tables=3, rounds=70)
