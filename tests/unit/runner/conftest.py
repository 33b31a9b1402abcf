"""Fixtures of the runner tests."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest


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
