"""Fixtures shared by every test folder."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("TCSEXAM_SHARED_DATA", ROOT.parent / "shared" / "data"))


@pytest.fixture(scope="session")
def project_root() -> Path:
    return ROOT


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The real benchmark data beside the repository (skips when absent)."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared benchmark data not found at {SHARED_DATA}")
    return SHARED_DATA


def pytest_collection_modifyitems(config, items):
    """`make test` runs the suite on pytest-xdist workers with `--dist loadgroup`: a test file is one
    group (its module fixtures are built once, on one worker), and every test that uses the
    session's finished tiny workflow run (tests/integration/conftest.py) joins one group, so that
    run is made once, not once per worker. Without xdist the marks do nothing."""
    for item in items:
        fixtures = getattr(item, "fixturenames", ())
        group = "finished-tiny-run" if "finished_tiny_run" in fixtures else item.nodeid.split("::", 1)[0]
        item.add_marker(pytest.mark.xdist_group(group))
