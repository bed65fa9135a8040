"""docs/page.png: the ranking page on an example, as the README shows it.

Starts gunicorn on loopback with the shipped model (or uses `--url`), opens the page in
headless Chromium (Debian's `chromium` and `chromedriver`: `make system-deps`), ranks three
candidates against a reference, selects the second and focuses its first mark so a reason
shows, and saves the whole page.

Usage: python -m bench.screenshot [--out docs/page.png] [--url http://127.0.0.1:8000]
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from bench._args import parser
from bench._server import ROOT, serve

REFERENCE = "The company said profits rose in the first quarter."
CANDIDATES = [
    "The company said profits rose the in first quarter.",
    "quarter rose The profits first company the said in.",
    "The company said that profits rose in the first quarter.",
]


def main(argv=None) -> int:
    ap = parser(__doc__)
    ap.add_argument("--out", default=str(ROOT / "docs" / "page.png"))
    ap.add_argument("--url", help="a running server (default: start one)")
    ap.add_argument("--width", type=int, default=1100)
    args = ap.parse_args(argv)
    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    driver_path = shutil.which("chromedriver") or "/usr/bin/chromedriver"
    if not binary or not Path(driver_path).is_file():
        raise SystemExit("no Chromium and chromedriver: make system-deps installs them")

    with serve(args.url, workers=1, model_path="models/default") as server:
        shoot(server.url, Path(args.out), args.width, binary, driver_path)
    return 0


def shoot(url: str, out: Path, width: int, binary: str, driver_path: str) -> None:
    """Rank the example on the page at `url` in headless Chromium and save the whole page."""
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    options = Options()
    options.binary_location = binary
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"):
        options.add_argument(arg)
    options.add_argument(f"--window-size={width},900")
    driver = webdriver.Chrome(service=Service(driver_path), options=options)
    try:
        driver.get(url.rstrip("/") + "/")
        driver.find_element(By.ID, "reference").send_keys(REFERENCE)
        driver.find_element(By.ID, "candidates").send_keys("\n".join(CANDIDATES))
        driver.find_element(By.ID, "rank").click()
        WebDriverWait(driver, 180).until(
            lambda d: (
                d.find_element(By.ID, "results").is_displayed()
                or d.find_element(By.ID, "error").is_displayed()
            )
        )
        if driver.find_element(By.ID, "error").is_displayed():
            raise SystemExit(f"the page shows an error: {driver.find_element(By.ID, 'error').text}")
        driver.find_elements(By.CSS_SELECTOR, "button.pick")[1].click()
        marks = driver.find_elements(By.CSS_SELECTOR, "#why-text mark.span")
        if marks:
            driver.execute_script("arguments[0].focus()", marks[0])
        height = driver.execute_script("return document.documentElement.scrollHeight")
        driver.set_window_size(width, height + 200)  # the window's frame takes some
        driver.execute_script("window.scrollTo(0, 0)")
        height = driver.execute_script("return document.documentElement.scrollHeight")
        driver.set_window_size(width, height + 200)
        out.parent.mkdir(parents=True, exist_ok=True)
        driver.save_screenshot(str(out))
        print(f"wrote {out} ({width} px wide)")
    finally:
        driver.quit()


if __name__ == "__main__":
    sys.exit(main())
