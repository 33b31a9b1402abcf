"""Headless Chromium for the explorer's tests: Debian's chromium driven by Selenium through
Debian's chromedriver (nothing downloaded at run time), and the few page helpers the tests share.

Without chromium, chromedriver or selenium a test using `browser_or_skip` skips with the reason;
with TCSEXAM_REQUIRE_BROWSER=1 (CI) that is a failure instead.
"""

from __future__ import annotations

import os
import shutil
from contextlib import contextmanager
from pathlib import Path

import pytest

CHROMIUM = os.environ.get("TCSEXAM_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("TCSEXAM_CHROMEDRIVER", "/usr/bin/chromedriver")
TIMEOUT = 60


def browser_problem() -> str | None:
    if not Path(CHROMIUM).is_file():
        return f"no chromium at {CHROMIUM} (apt-get install chromium)"
    if not Path(CHROMEDRIVER).is_file() and shutil.which("chromedriver") is None:
        return f"no chromedriver at {CHROMEDRIVER} (apt-get install chromium-driver)"
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install -e '.[test]')"
    return None


@contextmanager
def browser_or_skip():
    problem = browser_problem()
    if problem:
        if os.environ.get("TCSEXAM_REQUIRE_BROWSER") == "1":
            pytest.fail(f"a headless Chromium must run here (TCSEXAM_REQUIRE_BROWSER=1): {problem}")
        pytest.skip(problem)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1360,900"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver_path = CHROMEDRIVER if Path(CHROMEDRIVER).is_file() else shutil.which("chromedriver")
    driver = webdriver.Chrome(service=Service(driver_path), options=options)
    driver.set_page_load_timeout(120)
    try:
        yield driver
    finally:
        driver.quit()


def wait(driver, css: str, count: int = 1):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(driver, TIMEOUT).until(lambda d: len(d.find_elements(By.CSS_SELECTOR, css)) >= count)
    return driver.find_elements(By.CSS_SELECTOR, css)


def open_site(driver, site: Path, route: str = "#/") -> None:
    """Load the site's index.html from file:// at `route` (a fresh page load, not a hash change)."""
    url = site.joinpath("index.html").resolve().as_uri() + route
    driver.get(url)
    if driver.current_url.split("#")[0] != url.split("#")[0]:
        driver.get(url)
    driver.refresh()
    wait(driver, "body[data-ready='1']")


def console_errors(driver) -> list[dict]:
    return [e for e in driver.get_log("browser") if e.get("level") == "SEVERE"]


def save_small_png(path: Path, target: Path, width: int = 1100) -> None:
    """A screenshot for the docs: scaled to `width` pixels and palette-compressed (small PNGs in git)."""
    from PIL import Image

    with Image.open(path) as im:
        im = im.convert("RGB")
        if im.width > width:
            im = im.resize((width, round(im.height * width / im.width)), Image.LANCZOS)
        im.quantize(colors=128, method=Image.Quantize.MEDIANCUT).save(target, optimize=True)
