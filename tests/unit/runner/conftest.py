"""Fixtures of the runner tests (the hostile suite's plain helpers: hostile_support.py)."""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from hostile_support import tiny_maxcut  # noqa: E402


@pytest.fixture
def reachable_tmp():
    """A fresh folder (mode 0755, in /tmp) that an unprivileged candidate uid can reach: a root
    harness runs candidates as such a uid, and pytest's own tmp_path sits in a 0700 folder."""
    folder = Path(tempfile.mkdtemp(prefix="tcsexam-test-", dir="/tmp"))
    folder.chmod(0o755)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def harness_uid(monkeypatch):
    """Candidates run as the harness's own user even as root (`TCSEXAM_CANDIDATE_UID=harness`):
    for tests of what the harness itself withstands when a candidate can do what its user can."""
    import tcsexam.runner.sandboxes.runas as runas

    monkeypatch.setenv("TCSEXAM_CANDIDATE_UID", "harness")
    monkeypatch.setattr(runas, "_ids", None)


@pytest.fixture(scope="module")
def task(tmp_path_factory):
    """The hostile suite's tiny MaxCut task (hostile_support.tiny_maxcut), one per test file.
    The candidates of hostile/ run under hostile_support.HOSTILE_LIMITS instead of its limits;
    test_hostile_reads.py has a task of its own, with more time."""
    limits = "{wall_s: 2, cpu_s: 4, mem_mb: 300, output_mb: 1, nproc: 64}"
    return tiny_maxcut(tmp_path_factory.mktemp("hostile-task"), limits)
