"""A failed job never stops the rest (issue 46.3), on the real workflow and the tiny config.

In a copy of the finished tiny run, one proof item's task file is made to need a Coq release
nobody has (its proof jobs then fail with one line, as a missing coqc does), and one independent
Solver attempt and one construction attempt are made to need rerunning. The run:

- exits non-zero (Snakemake and SLURM see the failed jobs),
- still runs the independent jobs (the workflow keeps going without --keep-going),
- writes index.json `incomplete`, index null, the failed attempts judge_failed in the attempt
  table and in the models' issues with the failed job's one-line reason; every other row valid;
- says the reason in its last lines.

Put right, the same command runs only the failed jobs and the aggregation, and the Index is the
finished run's again.
"""

from __future__ import annotations

import csv
import json
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_workflow import CONFIG, OUT, snakemake, stop_ray_head  # noqa: E402

pytestmark = pytest.mark.slow

PROOF_ITEM = "theorem-gauss-sum"


def _rows(ws: Path) -> list[dict]:
    with open(ws / OUT / "attempts.csv", newline="") as fh:
        return list(csv.DictReader(fh))


def test_a_failed_job_leaves_the_others_judged_and_the_index_incomplete(finished_tiny_run, tmp_path):
    """Two reruns of the changed jobs only (the failing run, then the one put right): about 90 s
    on two cores besides the shared finished tiny run."""
    ws = tmp_path / "ws"
    shutil.copytree(finished_tiny_run, ws, symlinks=True)
    before = json.loads((ws / OUT / "index.json").read_text())
    task = ws / "config" / "tasks" / f"{PROOF_ITEM}.yaml"
    if not task.is_file() or not list((ws / OUT / "proof").glob(f"*/{PROOF_ITEM}/1/row.json")):
        pytest.skip(f"the tiny run checks no proof of {PROOF_ITEM}")
    original = task.read_text()
    task.write_text(original.replace('version: "8.16"', 'version: "8.99"'))
    assert task.read_text() != original
    # independent jobs that must still run: a Solver attempt's and a construction's rows
    solver_row = ws / OUT / "solver" / "demo-fast" / "sat-satlib" / "1" / "row.json"
    solver_row.unlink()
    constructions = sorted((ws / OUT / "construction").glob("demo-weak/*/1/row.json"))
    constructions[0].unlink()
    try:
        failed = snakemake(ws, "--cores", "2", "--configfile", CONFIG, check=False)
    finally:
        stop_ray_head(ws)
    assert failed.returncode != 0
    assert solver_row.is_file() and constructions[0].is_file()  # the others ran
    index = json.loads((ws / OUT / "index.json").read_text())
    assert index["status"] == "incomplete"
    assert all(m["index"] is None for m in index["models"].values())
    rows = _rows(ws)
    bad = [r for r in rows if r["score_status"] != "valid"]
    assert {(r["item"], r["score_status"]) for r in bad} == {(PROOF_ITEM, "judge_failed")}, bad
    assert len(bad) == len(index["models"])  # one attempt per model
    assert all("needs Coq 8.99" in r["note"] for r in bad), bad[0]["note"]
    issues = [i for m in index["models"].values() for i in m["issues"]]
    assert {(i["item"], i["reason"]) for i in issues} == {(PROOF_ITEM, "judge_failed")}, issues
    assert "needs Coq 8.99" in "".join(failed.stderr.splitlines(True)[-30:])

    task.write_text(original)
    try:
        snakemake(ws, "--cores", "2", "--configfile", CONFIG)
    finally:
        stop_ray_head(ws)
    after = json.loads((ws / OUT / "index.json").read_text())
    assert after["status"] == "complete"
    assert {m: v["index"] for m, v in after["models"].items()} == {m: v["index"] for m, v in before["models"].items()}
