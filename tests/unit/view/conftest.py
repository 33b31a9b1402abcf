"""Fixtures of the explorer's tests: tiny fabricated runs (tinyrun.py), their sites, and a real
headless Chromium driven by Selenium through Debian's chromedriver (nothing downloaded).

Without chromium, chromedriver or selenium the browser tests skip with the reason; with
TCSEXAM_REQUIRE_BROWSER=1 (CI) that is a failure instead.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from tinyrun import make_orspace, make_run  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]
CHROMIUM = os.environ.get("TCSEXAM_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("TCSEXAM_CHROMEDRIVER", "/usr/bin/chromedriver")
#: the changed record of the second tiny run (a status change the comparison must show)
FLIPPED = ("alpha", "maxcut-mqlib", "maxcut-mqlib-2")


def build_site(run: Path, out: Path, *extra: str) -> Path:
    proc = subprocess.run(
        [sys.executable, "-m", "tcsexam", "view", str(run), *extra, "--output", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
    )
    assert proc.returncode == 0, proc.stderr
    return out


@pytest.fixture(scope="session")
def tiny_runs(tmp_path_factory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("view-runs")
    return make_run(base / "a" / "lite" / "offline"), make_run(base / "b" / "lite" / "offline", flip={FLIPPED})


@pytest.fixture(scope="session")
def tiny_site(tiny_runs, tmp_path_factory) -> Path:
    orspace = make_orspace(tmp_path_factory.mktemp("view-orspace") / "orspace")
    return build_site(
        tiny_runs[0], tmp_path_factory.mktemp("view-site") / "site", "--orspace", str(orspace), "--verify-records"
    )


@pytest.fixture(scope="session")
def compare_site(tiny_runs, tmp_path_factory) -> Path:
    a, b = tiny_runs
    return build_site(a, tmp_path_factory.mktemp("view-cmp") / "site", str(b), "--resamples", "200")


def _browser_problem() -> str | None:
    if not Path(CHROMIUM).is_file():
        return f"no chromium at {CHROMIUM} (apt-get install chromium)"
    if not Path(CHROMEDRIVER).is_file() and shutil.which("chromedriver") is None:
        return f"no chromedriver at {CHROMEDRIVER} (apt-get install chromium-driver)"
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install -e '.[test]')"
    return None


@pytest.fixture(scope="session")
def browser():
    problem = _browser_problem()
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
