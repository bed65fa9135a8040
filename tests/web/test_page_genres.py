"""The page's genre picker, in a real browser (headless Chromium driven by Selenium) against
gunicorn serving `genres` (the shipped default with heads added to its card:
`tests/genre_bundles.py`) and the shipped default as it is: the picker lists the chosen model's
heads, "general" first, the page sends the one picked, and says which head scored.

Skips, saying why, only when no Chromium or chromedriver is found (`make system-deps`)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import pytest
import requests
from genre_bundles import with_heads
from web.support import Server, start_server, stop_server
from web.test_page import CORRECT, MISPLACED, SALAD, _fluency_by_index, _wait_for, chrome

from features.resources import MODELS_DIR

webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed")
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import Select, WebDriverWait  # noqa: E402

CANDIDATES = [CORRECT, MISPLACED, SALAD]


@pytest.fixture(scope="module")
def live(tmp_path_factory) -> Iterator[Server]:
    from web.test_page import find_browser

    if find_browser() is None:
        pytest.skip("no Chromium and chromedriver found; `make system-deps` installs them")
    root = tmp_path_factory.mktemp("page-genres")
    with_heads(MODELS_DIR / "default", root / "genres", "genres")
    shutil.copytree(MODELS_DIR / "default", root / "default")
    env = {
        "FLUENCY_MODEL_PATH": str(root / "genres"),
        "FLUENCY_MODELS": "genres,default",
        "FLUENCY_ADMIN_TOKEN": "",
    }
    srv = start_server(root, root / "server.log", workers=1, env=env)
    yield srv
    stop_server(srv.proc)


@pytest.fixture(scope="module")
def browser(live):
    driver = chrome()
    yield driver
    driver.quit()


def _served(live: Server, model: str, genre: str) -> dict[str, str]:
    """The fluency the service gives each candidate under that head, as the page prints it."""
    body = {"sentences": CANDIDATES, "model": model, "genre": genre}
    scores = requests.post(live.url + "/v1/score", json=body, timeout=60).json()["scores"]
    return {str(s["index"]): f"{s['fluency']:.3f}" for s in scores}


def _rank_and_wait(browser, used: str) -> None:
    browser.find_element(By.ID, "rank").click()
    WebDriverWait(browser, 60).until(lambda d: d.find_element(By.ID, "genre-used").text == used)


def test_a_genre_is_picked_sent_and_named_in_the_answer(live, browser):
    browser.get(live.url + "/")
    _wait_for(browser, "genre-choice", 30)
    genre = Select(browser.find_element(By.ID, "genre-select"))
    assert [o.get_attribute("value") for o in genre.options] == ["general", "mt", "dialogue"]
    assert genre.first_selected_option.get_attribute("value") == "general"
    assert "held out: \u03c1 0.33" in genre.options[1].text  # the card's report for mt
    assert genre.options[2].text == "dialogue"  # none reported

    browser.find_element(By.ID, "candidates").send_keys("\n".join(CANDIDATES))
    _rank_and_wait(browser, ", genre general")
    assert browser.find_element(By.ID, "model").text == "model genres"
    assert _fluency_by_index(browser) == _served(live, "genres", "general")

    genre.select_by_value("mt")
    _rank_and_wait(browser, ", genre mt")
    by_mt = _fluency_by_index(browser)
    assert by_mt == _served(live, "genres", "mt") != _served(live, "genres", "general")
    # The explanation is of the mt head's score, and adds up to it.
    caption = browser.find_element(By.ID, "bars-caption").text
    top = browser.find_element(By.CSS_SELECTOR, "#ranked tbody tr").get_attribute("data-index")
    assert f"Score {by_mt[top]} = intercept" in caption, caption


def test_a_model_without_genre_heads_hides_the_picker_and_scores_as_general(live, browser):
    browser.get(live.url + "/")
    _wait_for(browser, "genre-choice", 30)
    Select(browser.find_element(By.ID, "genre-select")).select_by_value("dialogue")
    Select(browser.find_element(By.ID, "model-select")).select_by_value("default")
    shipped = requests.get(live.url + "/v1/models", timeout=30).json()["models"][1]
    if len(shipped["genres"]) > 1:  # the shipped card has heads: then its picker shows them
        genre = Select(browser.find_element(By.ID, "genre-select"))
        values = [o.get_attribute("value") for o in genre.options]
        assert values == [g["name"] for g in shipped["genres"]]
        assert genre.first_selected_option.get_attribute("value") == "general"
    else:
        assert not browser.find_element(By.ID, "genre-choice").is_displayed()
    browser.find_element(By.ID, "candidates").send_keys("\n".join(CANDIDATES))
    _rank_and_wait(browser, ", genre general")
    assert browser.find_element(By.ID, "model").text == "model default"
    assert _fluency_by_index(browser) == _served(live, "default", "general")
