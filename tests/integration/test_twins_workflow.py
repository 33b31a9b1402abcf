"""Twins in the workflow, for real (docs/twins.md): the tiny config (two instances per Lite Solver
task) with the memorising demo-memo and `twins: {seed: 3}`. Every candidate is scanned at staging
(scan.json, the manifest, index.json), every Solver attempt also runs on its twins, index.json
reports the paired differences and flags demo-memo; with `score_on: twins` the Solver task means
are the twins' (the reference id suffixed -twin-s3), without it the originals'."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from test_workflow import ROOT, SOLVER_TASKS, snakemake, stop_ray_head

pytestmark = pytest.mark.slow
OUT = "results/test/lite/offline"


def _workspace(dest: Path) -> Path:
    dest.mkdir(parents=True)
    shutil.copy2(ROOT / "Snakefile", dest / "Snakefile")
    for name in ("rules", "workflow", "config", "envs"):
        shutil.copytree(ROOT / name, dest / name)
    shutil.copytree(ROOT / "solvers" / "demo-memo", dest / "solvers" / "demo-memo")
    (dest / "config" / "verdicts").mkdir(exist_ok=True)
    (dest / "references").mkdir()
    (dest / "references" / "instances").symlink_to(ROOT / "references" / "instances")
    return dest


def _config(ws: Path, **twins) -> str:
    cfg = {"models": [{"name": "demo-memo"}], "allow_missing": True, "twins": {"seed": 3, **twins}}
    path = ws / "twins.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return str(path)


def test_twins_in_the_workflow_flag_demo_memo_and_score_on_twins(tmp_path):
    ws = _workspace(tmp_path / "ws")
    try:
        snakemake(ws, "--cores", "2", "--configfile", "config/test/config.yaml", _config(ws), timeout=900)
        index = json.loads((ws / OUT / "index.json").read_text())
        manifest = json.loads((ws / OUT / "manifest.json").read_text())
        memo = index["models"]["demo-memo"]
        assert index["solver_reference_id"] == "tcsexam-test-k3-v2"
        assert index["twins"]["seeds"] == [3]
        for task in SOLVER_TASKS:
            assert (ws / OUT / "twins" / "s3" / "solver" / "demo-memo" / task / "1" / "relative.json").is_file()
            assert manifest["candidates"]["demo-memo"][task]["1"]["scan"]["findings"]
        per_task = index["twins"]["models"]["demo-memo"]
        flagged = sorted(t for t, d in per_task.items() if d["flagged"])
        issues = {i["reason"]: i for i in memo["issues"]}
        assert sorted(issues["memorisation_suspected"]["tasks"]) == flagged and len(flagged) >= 3, per_task
        assert sorted(issues["hardcoded_answers_suspected"]["tasks"]) == sorted(SOLVER_TASKS)
        assert {f["file"] for f in memo["candidate_scan"]["findings"]} == {"answers.py"}
        originals = {t: memo["task_means"][t] for t in SOLVER_TASKS}
        for task in SOLVER_TASKS:
            assert originals[task] == pytest.approx(per_task[task]["original"])

        snakemake(
            ws, "--cores", "2", "--configfile", "config/test/config.yaml", _config(ws, score_on="twins"), timeout=900
        )
        on_twins = json.loads((ws / OUT / "index.json").read_text())
        assert on_twins["solver_reference_id"] == "tcsexam-test-k3-v2-twin-s3"
        means = on_twins["models"]["demo-memo"]["task_means"]
        for task in SOLVER_TASKS:
            assert means[task] == pytest.approx(per_task[task]["twin"])
        assert sum(means[t] for t in SOLVER_TASKS) < sum(originals.values())
    finally:
        stop_ray_head(ws)
