"""The page at /, in a real browser (headless Chromium driven by Selenium) against gunicorn
serving the shipped models/default and models/data-to-text on loopback: rank, read the marks,
select, pick the other model, fail in words.

Skips, saying why, only when no Chromium or chromedriver is found (`make system-deps`
installs both from Debian)."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from web.support import Server, start_server, stop_server

from features.resources import MODELS_DIR
from scorer.web.page import CSP

webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed")
from selenium.common.exceptions import TimeoutException  # noqa: E402
from selenium.webdriver.chrome.options import Options  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.support.ui import Select, WebDriverWait  # noqa: E402

STATIC = Path(__file__).resolve().parents[2] / "scorer" / "web" / "static"
REFERENCE = "The company said profits rose in the first quarter."
CORRECT = "The company said profits rose in the first quarter."
MISPLACED = "The company said profits rose the in first quarter."
SALAD = "quarter rose The profits first company the said in."


def find_browser() -> tuple[str, str] | None:
    """(Chromium binary, chromedriver) if both are installed."""
    binary = next(
        (p for n in ("chromium", "chromium-browser", "google-chrome") if (p := shutil.which(n))),
        None,
    )
    driver = shutil.which("chromedriver") or (
        "/usr/bin/chromedriver" if Path("/usr/bin/chromedriver").is_file() else None
    )
    return (binary, driver) if binary and driver else None


def chrome(width: int = 1200, height: int = 1000):
    found = find_browser()
    if found is None:
        pytest.skip("no Chromium and chromedriver found; `make system-deps` installs them")
    binary, driver = found
    options = Options()
    options.binary_location = binary
    for arg in (
        "--headless=new",
        "--no-sandbox",  # root in a container has no user namespace for the sandbox
        "--disable-dev-shm-usage",
        "--disable-gpu",
        f"--window-size={width},{height}",
    ):
        options.add_argument(arg)
    return webdriver.Chrome(service=Service(driver), options=options)


@pytest.fixture(scope="module")
def live(tmp_path_factory) -> Iterator[Server]:
    if find_browser() is None:
        pytest.skip("no Chromium and chromedriver found; `make system-deps` installs them")
    log = tmp_path_factory.mktemp("page") / "server.log"
    env = {
        "FLUENCY_MODEL_PATH": str(MODELS_DIR / "default"),
        "FLUENCY_MODELS": "default,data-to-text",
        "FLUENCY_ADMIN_TOKEN": "",
    }
    srv = start_server(MODELS_DIR, log, workers=1, env=env)
    yield srv
    stop_server(srv.proc)


@pytest.fixture(scope="module")
def browser(live):
    driver = chrome()
    yield driver
    driver.quit()


def _submit(driver, url: str, reference: str, candidates: list[str]) -> None:
    driver.get(url + "/")
    driver.find_element(By.ID, "reference").send_keys(reference)
    driver.find_element(By.ID, "candidates").send_keys("\n".join(candidates))
    driver.find_element(By.ID, "rank").click()


def _wait_for(driver, element_id: str, seconds: float = 120):
    try:
        WebDriverWait(driver, seconds).until(
            lambda d: d.find_element(By.ID, element_id).is_displayed()
        )
    except TimeoutException:
        status = driver.find_element(By.ID, "status").text
        error = driver.find_element(By.ID, "error").get_attribute("textContent")
        pytest.fail(f"#{element_id} not shown after {seconds} s: status {status!r}, {error!r}")
    return driver.find_element(By.ID, element_id)


def test_candidates_come_back_ranked_with_their_reasons(live, browser):
    _submit(browser, live.url, REFERENCE, [MISPLACED, SALAD, CORRECT])
    _wait_for(browser, "results")
    rows = browser.find_elements(By.CSS_SELECTOR, "#ranked tbody tr")
    assert [r.get_attribute("data-index") for r in rows] == ["2", "0", "1"]
    cells = [[td.text for td in r.find_elements(By.TAG_NAME, "td")] for r in rows]
    for rank, (number, _, combined, fluency, accuracy) in enumerate(cells, start=1):
        assert number == str(rank)
        assert re.fullmatch(r"-?\d+\.\d{3}", combined) and re.fullmatch(r"-?\d+\.\d{3}", fluency)
        assert "chrF" in accuracy and "tree acc." in accuracy

    # The salad carries marks; each says why on focus (keyboard) and on hover.
    marks = rows[2].find_elements(By.CSS_SELECTOR, "mark.span")
    assert marks, rows[2].get_attribute("innerHTML")
    tip = browser.find_element(By.ID, marks[0].get_attribute("aria-describedby"))
    assert not tip.is_displayed()
    browser.execute_script("arguments[0].focus()", marks[0])
    assert tip.is_displayed() and tip.text
    assert "Link Grammar" in " ".join(
        browser.find_element(By.ID, m.get_attribute("aria-describedby")).get_attribute(
            "textContent"
        )
        for m in marks
    )

    # Select the salad by keyboard: its reasons listed and a bar per contribution.
    button = rows[2].find_element(By.CSS_SELECTOR, "button.pick")
    button.send_keys(Keys.ENTER)
    WebDriverWait(browser, 10).until(
        lambda d: "candidate 3" in d.find_element(By.ID, "why-title").text
    )
    assert browser.find_elements(By.CSS_SELECTOR, "#why-spans li")
    bars = browser.find_elements(By.CSS_SELECTOR, "#bars .bar-row")
    assert 1 <= len(bars) <= 8
    assert "exact" in browser.find_element(By.ID, "bars-caption").text

    # Nothing came from anywhere but this server.
    names = browser.execute_script(
        "return performance.getEntriesByType('resource').map(e => e.name)"
    )
    assert names and all(n.startswith(live.url + "/") for n in names), names


def _fluency_by_index(driver) -> dict[str, str]:
    rows = driver.find_elements(By.CSS_SELECTOR, "#ranked tbody tr")
    return {r.get_attribute("data-index"): r.find_elements(By.TAG_NAME, "td")[3].text for r in rows}


def test_a_second_model_is_picked_and_its_scores_come_back(live, browser):
    browser.get(live.url + "/")
    _wait_for(browser, "model-choice", 30)
    select = Select(browser.find_element(By.ID, "model-select"))
    assert [o.get_attribute("value") for o in select.options] == ["default", "data-to-text"]
    assert select.first_selected_option.get_attribute("value") == "default"
    assert "data-to-text" in select.options[1].text and "default" in select.options[0].text
    browser.find_element(By.ID, "candidates").send_keys("\n".join([CORRECT, MISPLACED, SALAD]))
    browser.find_element(By.ID, "rank").click()
    _wait_for(browser, "results")
    WebDriverWait(browser, 60).until(lambda d: d.find_element(By.ID, "model").text)
    assert browser.find_element(By.ID, "model").text == "model default"
    by_default = _fluency_by_index(browser)

    select.select_by_value("data-to-text")
    browser.find_element(By.ID, "rank").click()
    WebDriverWait(browser, 60).until(
        lambda d: d.find_element(By.ID, "model").text == "model data-to-text"
    )
    by_calibrated = _fluency_by_index(browser)
    assert set(by_calibrated) == set(by_default) == {"0", "1", "2"}
    assert all(by_calibrated[i] != by_default[i] for i in by_default), (by_default, by_calibrated)
    # The reasons are the GLEU stage's; the caption says the fluency is its calibration.
    assert "is its calibration" in browser.find_element(By.ID, "bars-caption").text


def test_the_selector_stays_hidden_with_one_model(server, browser):
    browser.get(server.url + "/")
    WebDriverWait(browser, 30).until(
        lambda d: d.find_elements(By.CSS_SELECTOR, "#model-select option")
    )
    assert not browser.find_element(By.ID, "model-choice").is_displayed()


def test_bad_input_is_shown_in_words(live, browser):
    _submit(browser, live.url, "", [CORRECT, "word " * 70])
    error = _wait_for(browser, "error")
    assert "candidate 2 has 349 characters, at most 300" in error.text, error.text
    assert not browser.find_element(By.ID, "results").is_displayed()

    browser.find_element(By.ID, "candidates").clear()
    browser.find_element(By.ID, "candidates").send_keys("   ")
    browser.find_element(By.ID, "rank").click()
    WebDriverWait(browser, 10).until(
        lambda d: "at least one candidate" in d.find_element(By.ID, "error").text
    )


def test_the_page_fits_a_phone(live):
    driver = chrome(390, 844)
    try:
        _submit(driver, live.url, "", [CORRECT, SALAD])
        _wait_for(driver, "results")
        width = driver.execute_script("return document.documentElement.scrollWidth")
        viewport = driver.execute_script("return window.innerWidth")
        assert width <= viewport, (width, viewport)
    finally:
        driver.quit()


def test_the_page_and_its_files_name_no_other_host(client):
    resp = client.get("/")
    assert resp.status_code == 200 and resp.mimetype == "text/html"
    assert resp.headers["Content-Security-Policy"] == CSP
    for name in ("page.js", "page.css"):
        assert client.get(f"/static/{name}").status_code == 200
    for path in STATIC.iterdir():
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"(https?:)?//[a-z0-9.-]+\.[a-z]{2,}", text, re.I), path
