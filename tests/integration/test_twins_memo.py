"""Memorisation caught, for real (docs/twins.md): the memorising demo-memo and the honest
demo-strong run on originals and on twins of a subset of two Lite tasks (six TSPLIB instances, six
SATLIB files: a few minutes on 2 cores), scored against the Lite reference restricted to them.

- demo-memo answers the originals from its embedded table (keyed on content hashes, not file
  names) and falls back to a weak heuristic on the twins: its difference original - twin is large,
  its interval excludes 0, and it is flagged memorisation_suspected on both tasks;
- demo-strong's difference is within noise: its interval covers 0 and it is not flagged;
- `tcsexam scan-candidate` finds demo-memo's table (file and line) and nothing in demo-strong.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tcsexam.scoring.twins import THRESHOLD, memorisation_issue, twin_differences

ROOT = Path(__file__).resolve().parents[2]
TCSEXAM = [sys.executable, "-m", "tcsexam"]
SUBSET = {
    "tsp-tsplib": ["burma14", "ulysses16", "gr17", "gr21", "fri26", "bayg29"],
    "sat-satlib": ["uf50-01", "uf50-02", "uf75-01", "uf100-01", "uuf50-01", "uuf75-01"],
}
MODELS = ("demo-memo", "demo-strong")
SEED = 5

pytestmark = pytest.mark.slow


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, TCSEXAM_ROOT=str(ROOT))
    proc = subprocess.run([*TCSEXAM, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc


def _subset_task_and_reference(tmp: Path) -> dict[str, tuple[Path, Path]]:
    """Per task: a task file with the subset's instances and the Lite reference restricted to them."""
    import yaml

    lite = json.loads((ROOT / "references" / "lite.json").read_text())
    out = {}
    for task, names in SUBSET.items():
        data = yaml.safe_load((ROOT / "config" / "tasks" / f"{task}.yaml").read_text())
        data["instances"] = [r for r in data["instances"] if r["name"] in names]
        task_file = tmp / f"{task}.yaml"
        task_file.write_text(yaml.safe_dump(data, sort_keys=False))
        ref = {k: v for k, v in lite.items() if k in ("schema_version", "scale_floors")}
        ref["reference_id"] = "test-twins-subset"
        t = lite["tasks"][task]
        ref["tasks"] = {task: {**t, "instances": {n: t["instances"][n] for n in names}}}
        ref_file = tmp / f"ref-{task}.json"
        ref_file.write_text(json.dumps(ref))
        out[task] = (task_file, ref_file)
    return out


def _run_and_score(task: str, task_file: Path, ref: Path, model: str, solver_dir: Path, cwd: Path) -> None:
    att = solver_dir / model / task / "1"
    att.mkdir(parents=True, exist_ok=True)
    _cli(
        "run",
        "--task",
        str(task_file),
        "--candidate",
        str(ROOT / "solvers" / model / task / "1"),
        "--output",
        str(att / "records.json"),
        "--records-dir",
        str(att / "records"),
        "--no-ray",
        "--sandbox",
        "auto",
        "--allow-unsandboxed",
        "--no-progress",
        cwd=cwd,
    )
    _cli(
        "solver-score",
        "--task",
        task,
        "--records",
        str(att / "records.json"),
        "--reference",
        str(ref),
        "--output",
        str(att / "relative.json"),
        cwd=cwd,
    )


def test_demo_memo_is_flagged_and_demo_strong_is_not(tmp_path):
    subsets = _subset_task_and_reference(tmp_path)
    originals, twins = tmp_path / "solver", tmp_path / "twins"
    for task, (task_file, ref) in subsets.items():
        folder = twins / f"s{SEED}" / "tasks" / task
        _cli(
            "twins",
            "make",
            "--task",
            str(task_file),
            "--seed",
            str(SEED),
            "--output",
            str(folder),
            "--reference",
            str(ref),
            cwd=tmp_path,
        )
        for model in MODELS:
            _run_and_score(task, task_file, ref, model, originals, tmp_path)
            _run_and_score(
                task, folder / "task.yaml", folder / "reference.json", model, twins / f"s{SEED}" / "solver", tmp_path
            )
    result = twin_differences(originals, twins, list(MODELS), list(SUBSET), seed=1, resamples=2000)
    memo, strong = result["models"]["demo-memo"], result["models"]["demo-strong"]
    for task in SUBSET:
        m, s = memo[task], strong[task]
        assert m["instances"] == 6 and m["copies"] == 1
        assert m["difference"] > THRESHOLD and m["ci95"][0] > 0 and m["flagged"], m
        assert s["ci95"][0] <= 0 <= s["ci95"][1] and not s["flagged"], s
        assert abs(s["difference"]) < THRESHOLD
    issue = memorisation_issue("demo-memo", memo, THRESHOLD)
    assert issue["reason"] == "memorisation_suspected" and sorted(issue["tasks"]) == sorted(SUBSET)
    assert memorisation_issue("demo-strong", strong, THRESHOLD) is None


@pytest.mark.parametrize("task", ["maxcut-mqlib", "tsp-tsplib", "coloring-dimacs", "sat-satlib", "maxsat-wcnf"])
def test_scan_finds_demo_memos_table_and_nothing_in_demo_strong(task, tmp_path):
    report_file = tmp_path / "scan.json"
    _cli(
        "scan-candidate",
        str(ROOT / "solvers" / "demo-memo" / task / "1"),
        "--task",
        task,
        "--output",
        str(report_file),
        cwd=tmp_path,
    )
    report = json.loads(report_file.read_text())
    assert report["findings"], report
    assert all(
        f["file"] == "answers.py" and isinstance(f["line"], int)
        for f in report["findings"]
        if f["kind"] != "opaque_file"
    )
    clean = _cli(
        "scan-candidate", str(ROOT / "solvers" / "demo-strong" / task / "1"), "--task", task, "--json", cwd=tmp_path
    )
    assert json.loads(clean.stdout)["findings"] == []
