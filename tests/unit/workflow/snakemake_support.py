"""Real Snakemake on a folder whose Snakefile includes rule files of the project: the rule files'
tests (tests/unit/orspace/test_rules.py, tests/unit/workflow/test_agents_workflow.py) run it with
the test environment's `snakemake` and `tcsexam` on PATH (skipped where snakemake is absent).

Import it with `sys.path.insert(0, str(<tests/unit/workflow>))` (like hostile_support)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


def snakemake(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    exe = Path(sys.executable).parent / "snakemake"
    if not exe.exists():
        pytest.skip("snakemake not installed in this environment")
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    return subprocess.run(
        [str(exe), "-s", str(cwd / "Snakefile"), "-d", str(cwd), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
