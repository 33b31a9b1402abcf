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
