"""The type gate (`make lint` runs mypy on src/, configured in pyproject.toml): an enum-typed
field or parameter takes a member, never its string, wherever the code names one."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [
    pytest.mark.skipif(
        importlib.util.find_spec("mypy") is None, reason="mypy is not installed (pip install -e '.[test]')"
    ),
    pytest.mark.slow,  # mypy follows the imports of tcsexam from a cold cache
]


def _mypy(tmp_path: Path, code: str) -> subprocess.CompletedProcess:
    snippet = tmp_path / "snippet.py"
    snippet.write_text(textwrap.dedent(code))
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--config-file",
            str(ROOT / "pyproject.toml"),
            "--cache-dir",
            str(tmp_path / "cache"),
            str(snippet),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
    )


def test_an_enum_field_takes_no_string(tmp_path):
    out = _mypy(
        tmp_path,
        """
        from tcsexam.containment import Limiter, SandboxName
        from tcsexam.records import InstanceRecord, Status
        from tcsexam.runner.engine.batch import RunOptions

        RunOptions(sandbox=SandboxName.DOCKER, limiter=Limiter.CGROUP)
        InstanceRecord(instance="a", status=Status.OK, sandbox=SandboxName.LOCAL, limiter=Limiter.LIGHT)
        RunOptions(sandbox="docker", limiter="cgroup")
        InstanceRecord(instance="a", status="ok", sandbox="local")
        """,
    )
    errors = [line for line in out.stdout.splitlines() if ": error:" in line]
    assert [line.split(":")[1] for line in errors] == ["8", "8", "9", "9"], out.stdout
    assert all("[arg-type]" in line for line in errors), out.stdout
