"""Fixtures of the explorer's tests: tiny fabricated runs (tinyrun.py), their sites, and a real
headless Chromium (browserkit.py: skipped with the reason when absent, a failure under
TCSEXAM_REQUIRE_BROWSER=1)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from browserkit import browser_or_skip  # noqa: E402
from tinyrun import FLIPPED, build_site, make_orspace, make_run  # noqa: E402


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


@pytest.fixture(scope="session")
def browser():
    with browser_or_skip() as driver:
        yield driver
