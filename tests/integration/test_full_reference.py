"""The bundled Full reference at the paper's scale, and its unscored path end to end: a real
candidate run through `tcsexam run` on eligible and unscored instances of a Full task, scored with
`tcsexam solver-score` against references/full.json."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import yaml

from tcsexam.scoring.reference import check_subset, load_reference
from tcsexam.suites import load_suite
from tcsexam.tasks import load_task


@pytest.fixture(scope="module")
def full():
    return load_reference("full")


def test_full_reference_counts_and_lite_subset(full):
    assert full.n_eligible >= 1860 and full.n_unscored >= 32
    assert set(full.tasks) == set(load_suite("full").tracks["solver"])
    check_subset(load_reference("lite"), full)
    for name, task in full.tasks.items():  # the reference covers exactly each task's instances
        names = {inst.name for inst in load_task(name).instances}
        assert set(task.instances) | set(task.unscored) == names, name
        assert all(len(v) == 3 for v in [*task.instances.values(), *task.unscored.values()]), name
        assert all(sum(x is not None for x in v) < 2 for v in task.unscored.values()), name


@pytest.mark.slow
def test_unscored_records_are_kept_and_listed_never_averaged(full, tmp_path, project_root):
    task_id = max(full.tasks, key=lambda t: len(full.tasks[t].unscored))
    ref = full.tasks[task_id]
    task = load_task(task_id)
    order = [inst.name for inst in task.instances]
    eligible = list(ref.instances)
    unscored = sorted(ref.unscored, key=order.index)[:2]
    doc = yaml.safe_load(task.source.read_text())
    doc["instance_dir"] = str(tmp_path / "instances")
    doc["instances"] = [row for row in doc["instances"] if row["name"] in {*eligible, *unscored}]
    task_file = tmp_path / f"{task_id}.yaml"
    task_file.write_text(yaml.safe_dump(doc, sort_keys=False))
    tcsexam = [sys.executable, "-m", "tcsexam"]
    subprocess.run([*tcsexam, "generate", "--task", str(task_file)], check=True, capture_output=True)
    cand = project_root / "solvers" / "demo-fast" / task_id / "1"
    records = tmp_path / "run" / "records.json"
    run = [*tcsexam, "run", "--task", str(task_file), "--candidate", str(cand), "--output", str(records)]
    subprocess.run([*run, "--workers", "2", "--no-progress"], check=True, capture_output=True)
    kept = {r["instance"]: r for r in json.loads(records.read_text())}
    assert set(kept) == {*eligible, *unscored}  # every record is kept, unscored ones included
    out = tmp_path / "relative.json"
    score = [*tcsexam, "solver-score", "--task", task_id, "--records", str(records), "--reference", "full"]
    subprocess.run([*score, "--output", str(out)], check=True, capture_output=True)
    result = json.loads(out.read_text())
    assert sorted(result["unscored_instances"]) == sorted(unscored)
    assert result["n_eligible"] == len(eligible) and result["reference_id"] == full.reference_id
    scored = {row["instance"]: row["score"] for row in result["instances"]}
    assert set(scored) == set(eligible)  # unscored instances have no score ...
    assert result["relative_score"] == pytest.approx(sum(scored.values()) / len(eligible))  # ... nor weight
