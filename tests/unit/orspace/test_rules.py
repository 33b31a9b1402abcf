"""rules/orspace.smk under real Snakemake: config validation, a small run, the dry run."""

from __future__ import annotations

import json
import os
import shutil
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


@pytest.fixture
def flow(project_root, tmp_path):
    (tmp_path / "Snakefile").write_text(f'include: "{project_root / "rules" / "orspace.smk"}"\n')
    (tmp_path / "workflow").symlink_to(project_root / "workflow")
    ws = tmp_path / "subs" / "Workspace_OR" / "build_workspaces"
    for n in (101, 105):
        shutil.copytree(
            project_root / "solvers" / "orspace-demo" / "Workspace_OR" / "build_workspaces" / f"instance_{n}",
            ws / f"instance_{n}",
        )
    rel = tmp_path / "rel" / "evaluation" / "build_evaluation"
    rel.mkdir(parents=True)
    rows = (
        (project_root / "references" / "orspace" / "evaluation" / "build_evaluation" / "reference_objectives.csv")
        .read_text()
        .splitlines()
    )
    rel.joinpath("reference_objectives.csv").write_text(
        "\n".join([rows[0]] + [r for r in rows if "_101_" in r or "_105_" in r]) + "\n"
    )
    return tmp_path


def test_small_run(flow):
    (flow / "c.yaml").write_text(
        "orspace:\n  runs:\n    t:\n      workspaces: subs\n      release: rel\n"
        "      modes: [build]\n      time_limit_s: 20\n"
    )
    proc = snakemake(flow, "--configfile", "c.yaml", "--cores", "1", "orspace_all")
    assert proc.returncode == 0, proc.stderr[-2000:]
    summary = json.loads((flow / "results" / "orspace" / "t" / "objectives.json").read_text())
    assert summary["passed"] == 1 and summary["failure_modes"]["execution_error"] == 1


def test_bad_config_is_refused(flow):
    (flow / "c.yaml").write_text(
        "orspace:\n  runs:\n    t:\n      workspaces: subs\n      release: rel\n      time_limit_s: -1\n"
    )
    proc = snakemake(flow, "--configfile", "c.yaml", "-n", "orspace_all")
    assert proc.returncode != 0 and "time_limit_s" in proc.stderr + proc.stdout


def test_without_orspace_config_nothing_runs(flow):
    proc = snakemake(flow, "-n", "orspace_all")
    assert proc.returncode == 0
    assert "orspace_execute" not in proc.stdout + proc.stderr  # only the empty target itself
