"""Fixtures shared by every test folder."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# a developer's default Ray head (tcsexam runner ray-head start) must not serve the tests' runs:
# the tests that join one name their own
os.environ["TCSEXAM_RAY_HEAD"] = "none"
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


@pytest.hookimpl(tryfirst=True)  # before xdist's own, which reads the marks into the node ids
def pytest_collection_modifyitems(config, items):
    """`make test` runs the suite on pytest-xdist workers with `--dist loadgroup`: a test file is one
    group, so its module fixtures are built once, on one worker. The session's finished tiny
    workflow run (tests/integration/conftest.py) is built once per test run, in the background:
    the files that use it (the workflow, compare, campaign, integrity and view tests, about half
    the suite's time) are spread over the workers instead of queueing on one. Without xdist the
    marks do nothing."""
    for item in items:
        item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::", 1)[0]))


def pytest_xdist_node_collection_finished(node, ids):
    """On the xdist controller under `--dist loadgroup`: stop when a worker's groups did not take
    (xdist marks a group in the node id, which no longer works with pytest 9.2: pytest-xdist#1386).
    The suite would still pass, each test on any worker, every module fixture rebuilt on each."""
    if node.config.getvalue("dist") == "loadgroup" and ids and not any("@" in i for i in ids):
        pytest.exit(
            f"--dist loadgroup: the test groups did not take effect on {node.gateway.id} (pytest-xdist#1386 "
            f"with pytest {pytest.__version__}); install the pytest that pyproject.toml's test extra names",
            returncode=4,
        )
