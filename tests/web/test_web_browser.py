"""The status page in a real browser: Debian's chromium, headless, driven by Selenium through
Debian's chromium-driver, reading `bot.py serve` over HTTP with its password.

CI installs both (`apt-get install chromium chromium-driver`, see .ci/run); without them these
tests skip, loudly. Each run keeps screenshots (phone and desktop width) and prints their paths;
with TWITTERBOT_ARTEFACTS set they are copied to that folder too."""

from __future__ import annotations

import base64
import os
import shutil
import time
from pathlib import Path
from typing import Iterator

import pytest
from conftest import BotHome
from web_home import (
    PASSWORD,
    PICTURE_ALT,
    PLAIN_LINE,
    SCRIPT_LINE,
    UNCERTAIN_LINE,
    Made,
    Server,
    keep_job_picture,
    populate,
    served,
)

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")
PHONE = (390, 844)
DESKTOP = (1280, 900)


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[object]:
    """A headless chromium; skipped, LOUDLY, where it is not installed (failed instead with
    TWITTERBOT_REQUIRE_BROWSER=1, which CI sets: CI installs it and must run these tests)."""
    if not CHROMIUM or not DRIVER:
        (pytest.fail if os.environ.get("TWITTERBOT_REQUIRE_BROWSER") == "1" else pytest.skip)(
            "NO CHROMIUM/CHROMEDRIVER ON PATH: the status page is NOT tested in a browser here"
            " (apt-get install chromium chromium-driver)"
        )
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        pytest.skip(
            "SELENIUM IS NOT INSTALLED: the status page is NOT tested in a browser here (pip install -r requirements-dev.txt)"
        )
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in (
        "--headless=new",
        "--no-sandbox",  # CI runs as root
        "--disable-dev-shm-usage",
        "--disable-gpu",
        "--no-first-run",
        "--hide-scrollbars",
        f"--user-data-dir={tmp_path / 'chromium-profile'}",
        f"--window-size={DESKTOP[0]},{DESKTOP[1]}",
    ):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(executable_path=DRIVER))
    try:
        driver.set_page_load_timeout(30)
        yield driver
    finally:
        driver.quit()


def authorise(driver, password: str = PASSWORD) -> None:
    """Send HTTP Basic auth with every request of the page (the stylesheet too), as a browser
    does once its owner typed the password."""
    token = base64.b64encode(f"owner:{password}".encode()).decode()
    driver.execute_cdp_cmd("Network.enable", {})
    driver.execute_cdp_cmd("Network.setExtraHTTPHeaders", {"headers": {"Authorization": f"Basic {token}"}})


def screenshot(driver, path: Path, width: int, height: int, *, mobile: bool) -> Path:
    """The whole page at `width`, as a phone (`mobile`) or a desktop shows it."""
    driver.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": height, "deviceScaleFactor": 2 if mobile else 1, "mobile": mobile},
    )
    driver.refresh()
    full = driver.execute_script("return document.documentElement.scrollHeight")
    driver.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": max(height, full), "deviceScaleFactor": 2 if mobile else 1, "mobile": mobile},
    )
    shot = driver.execute_cdp_cmd("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True})
    path.write_bytes(base64.b64decode(shot["data"]))
    keep = os.environ.get("TWITTERBOT_ARTEFACTS")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(path, Path(keep) / path.name)
    print(f"screenshot: {path}")
    return path


@pytest.fixture
def running_job(home: BotHome, made: Made) -> Iterator[str]:
    """A progress job that has posted and is still running (it holds its lock)."""
    name = "monkey shakespeare"
    process = home.start(
        "watch", "--name", name, "--first-after", "0", "--", "sh", "-c", "echo typed 5 of 18 letters; sleep 120"
    )
    try:
        deadline = time.monotonic() + 30
        while not any(post.text.startswith(f"{name}: typed") for post in home.emulator.posts):
            assert time.monotonic() < deadline and process.poll() is None, "the watch job did not post"
            time.sleep(0.1)
        yield name
    finally:
        process.kill()
        process.communicate(timeout=10)


@pytest.fixture
def bad_day(home: BotHome, made: Made) -> None:
    """After the job: a run X refused the keys for (a failure, and keys to fix) and a skipped run."""
    only = home.path / "refused.txt"
    only.write_text("This one X refused\n")
    home.emulator.fail_next("unauthorized")
    assert home.run("--tweets", str(only)).returncode == 77
    assert home.run("--one-in", "1000", "--seed", "3").returncode == 0


@pytest.fixture
def made(home: BotHome) -> Made:
    return populate(home)


@pytest.fixture
def server(home: BotHome, made: Made) -> Iterator[Server]:
    yield from served(home)


def test_the_owner_sees_the_post_the_uncertain_one_the_job_and_a_script_as_text(
    browser, home: BotHome, server: Server, made: Made, running_job: str, bad_day: None, tmp_path: Path
) -> None:
    from selenium.webdriver.common.by import By

    job_id, _ = keep_job_picture(home, made.job_name)  # as the reporter keeps a posted picture
    driver = browser
    authorise(driver)
    driver.get(server.url)
    assert "to look at" in driver.title  # the uncertain post needs the owner's eye

    # The post made through the X emulator, with its link.
    run = next(item for item in driver.find_elements(By.CSS_SELECTOR, "#runs li.run") if PLAIN_LINE in item.text)
    link = run.find_element(By.CSS_SELECTOR, ".networks a")
    assert link.get_attribute("href") == f"https://x.com/i/status/{made.posted_id}"
    assert "X: posted" in run.text

    # What needs attention, most urgent first: the keys X refused, the uncertain post (with where
    # to check it), the failed run.
    kinds = [item.get_attribute("class").split()[-1] for item in driver.find_elements(By.CSS_SELECTOR, "#attention li")]
    assert kinds == ["keys", "uncertain"]  # the run that failed for the keys is the keys' item, once
    card = driver.find_element(By.CSS_SELECTOR, "#attention li.uncertain")
    assert UNCERTAIN_LINE in card.text
    assert (
        card.find_element(By.CSS_SELECTOR, "a.check").get_attribute("href") == "https://x.com/intent/user?user_id=12345"
    )

    # The jobs: the one still running (it holds its lock) and the finished one, each with its thread.
    jobs = {
        item.find_element(By.CSS_SELECTOR, ".job-name").text: item
        for item in driver.find_elements(By.CSS_SELECTOR, "#jobs li.job")
    }
    assert set(jobs) == {running_job, made.job_name}
    assert "running" in jobs[running_job].find_element(By.CSS_SELECTOR, ".chip").text
    assert "typed 5 of 18 letters" in jobs[running_job].text
    assert (
        jobs[running_job].find_element(By.CSS_SELECTOR, "a").get_attribute("href").startswith("https://x.com/i/status/")
    )
    assert "done" in jobs[made.job_name].find_element(By.CSS_SELECTOR, ".chip").text
    # The finished job's latest picture, loaded (same origin, with the password) and described.
    picture = jobs[made.job_name].find_element(By.CSS_SELECTOR, "img.picture")
    assert picture.get_attribute("alt") == PICTURE_ALT
    assert picture.get_attribute("src") == f"{server.url}jobs/{job_id}/picture.png"
    assert picture.is_displayed() and driver.execute_script("return arguments[0].naturalWidth", picture) == 48
    assert jobs[running_job].find_elements(By.CSS_SELECTOR, "img") == []

    # A line holding <script> is text on the page, and no script element exists at all.
    lines = [element.text for element in driver.find_elements(By.CSS_SELECTOR, "#runs .line")]
    assert SCRIPT_LINE in lines
    assert driver.find_elements(By.TAG_NAME, "script") == []

    # The stylesheet loaded (same origin, allowed by the policy) and nothing was blocked.
    weight = driver.execute_script("return getComputedStyle(document.getElementById('verdict')).fontWeight")
    assert weight == "700"
    refused = [entry["message"] for entry in driver.get_log("browser") if "Content Security Policy" in entry["message"]]
    assert refused == []

    phone = screenshot(driver, tmp_path / "status-phone.png", *PHONE, mobile=True)
    desktop = screenshot(driver, tmp_path / "status-desktop.png", *DESKTOP, mobile=False)
    for shot in (phone, desktop):
        assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000
    # On a phone nothing is wider than the screen: no sideways scrolling.
    driver.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": PHONE[0], "height": PHONE[1], "deviceScaleFactor": 2, "mobile": True},
    )
    driver.refresh()
    assert driver.execute_script("return document.documentElement.scrollWidth") <= PHONE[0]


def test_without_the_password_the_browser_gets_nothing(browser, server: Server) -> None:
    from selenium.webdriver.common.by import By

    browser.get(server.url)  # chromium asks for the password (an auth prompt a headless one leaves blank)
    assert PLAIN_LINE not in browser.page_source
    assert browser.find_elements(By.CSS_SELECTOR, "#runs") == []
