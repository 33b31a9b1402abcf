"""Failures show where the user looks: a dry run stops with one line on a task file's missing
instance file and on a machine where no sandbox for the candidates works (as it does on a
model-name typo), and a job that fails prints its one-line reason on Snakemake's terminal, not
only in its log. Each case runs on a fresh workspace of the tiny config (no finished run needed)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_workflow import CONFIG, OUT, make_workspace, snakemake  # noqa: E402

pytestmark = pytest.mark.slow


def _one_line(proc, *needles: str) -> str:
    assert proc.returncode == 1, (proc.stdout + proc.stderr)[-3000:]
    assert "Traceback" not in proc.stdout + proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.startswith("tcsexam")]
    assert len(lines) == 1, proc.stderr[-3000:]
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


def test_dry_run_stops_on_a_missing_instance_file(tmp_path):
    ws = make_workspace(tmp_path / "ws")
    task = ws / "config" / "test" / "tasks" / "sat-satlib.yaml"
    first = next(line for line in task.read_text().splitlines() if line.strip().startswith("file:"))
    name = first.split(":", 1)[1].strip()
    task.write_text(task.read_text().replace(first, first.replace(name, "no-such-file.cnf"), 1))
    proc = snakemake(ws, "-n", "--configfile", CONFIG, check=False)
    _one_line(proc, "sat-satlib.yaml", "no-such-file.cnf is missing", "instance ")


def test_dry_run_stops_when_the_configured_sandbox_cannot_run(tmp_path):
    if shutil.which("apptainer"):
        pytest.skip("apptainer is installed: its sandbox may run here")
    ws = make_workspace(tmp_path / "ws")
    proc = snakemake(ws, "-n", "--configfile", CONFIG, "--config", "run={sandbox: apptainer}", check=False)
    _one_line(proc, "config run.sandbox", "sandbox apptainer", "not found")


def test_dry_run_checks_the_default_sandbox_once_and_passes(tmp_path):
    ws = make_workspace(tmp_path / "ws")
    proc = snakemake(ws, "-n", "--configfile", CONFIG)
    assert "tcsexam: error" not in proc.stderr


def test_a_failing_job_prints_its_reason_on_the_terminal(tmp_path):
    ws = make_workspace(tmp_path / "ws")
    task = ws / "config" / "test" / "tasks" / "maxcut-mqlib.yaml"
    task.write_text(task.read_text().replace("  file: G11.txt\n", "  file: G11.txt\n  sha256: '" + "0" * 64 + "'\n", 1))
    target = f"{OUT}/solver/demo-fast/maxcut-mqlib/1/records.json"
    proc = snakemake(ws, target, "--cores", "1", "--configfile", CONFIG, "--config", "run={ray: job}", check=False)
    assert proc.returncode != 0
    log = ws / OUT / "solver" / "demo-fast" / "maxcut-mqlib" / "1" / "run.log"
    reason = [line for line in log.read_text().splitlines() if " ERROR " in line]
    assert reason and "sha256" in reason[-1], log.read_text()
    shown = [line for line in proc.stderr.splitlines() if line.startswith("job failed (exit code 1): ")]
    assert len(shown) == 1, proc.stderr[-3000:]
    said = reason[-1].split(" ERROR ", 1)[1].strip()  # the CLI's line without its time stamp and level
    assert said.startswith("tcsexam run: error: ") and said in shown[0], shown[0]
    assert shown[0].endswith(f"(log: {OUT}/solver/demo-fast/maxcut-mqlib/1/run.log)")
