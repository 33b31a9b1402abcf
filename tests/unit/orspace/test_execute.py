"""execute on the bundled demo submissions, for real (runner's local sandbox and limits)."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace

import pytest

from tcsexam.errors import InputError
from tcsexam.orspace.execute import DEFAULT_LIMITS, DEFAULT_RUN, ExecuteSettings, execute, find_entry
from tcsexam.orspace.objectives import load_predictions, score_objectives
from tcsexam.orspace.release import load_release
from tcsexam.runner.engine.batch import PoolOptions

EXPECTED = {
    "or_space_101_build": None,
    "or_space_102_build": None,
    "or_space_103_build": "infeasible",
    "or_space_104_build": None,  # Optimal but the wrong objective: found by scoring
    "or_space_105_build": "execution_error",
    "or_space_106_build": "timeout",
    "or_space_107_build": "missing_output",
    "or_space_108_build": "unbounded",
    "or_space_101_revise": None,
    "or_space_102_revise": None,
    "or_space_103_revise": "not_optimal",
}


@pytest.fixture(scope="module")
def demo_run(demo, tmp_path_factory):
    out = tmp_path_factory.mktemp("exec")
    summary = execute(
        demo["workspaces"],
        out,
        ExecuteSettings(
            limits=replace(DEFAULT_LIMITS, wall_s=3.0), run=replace(DEFAULT_RUN, pool=PoolOptions(workers=2))
        ),
    )
    return out, summary


def test_every_failure_mode_of_the_demo(demo, demo_run):
    out, summary = demo_run
    assert summary["executed"] == 11
    preds = [json.loads(l) for l in (out / "predictions.jsonl").read_text().splitlines()]
    assert {p["workspace_id"]: p["failure_mode"] for p in preds} == EXPECTED
    timeout = json.loads((out / "records" / "or_space_106_build.json").read_text())
    assert timeout["termination"] == "walltime" and timeout["limits"]["wall_s"] == 3.0
    crash = json.loads((out / "records" / "or_space_105_build.json").read_text())
    assert crash["exit_code"] != 0 and "KeyError" in crash["stderr_tail"]
    nopt = json.loads((out / "records" / "or_space_103_revise.json").read_text())
    assert nopt["status"] == "Not Optimal" and "sol_status 2" in nopt["message"]
    rel = load_release(demo["release"])
    s = score_objectives(rel, load_predictions(out / "predictions.jsonl", set(rel.oracle)))
    assert s["passed"] == 4
    assert all(s["failure_modes"][m] == 1 for m in s["failure_modes"])  # every mode shown once


def test_rerun_reuses_records_and_a_changed_submission_runs_again(demo, demo_run, tmp_path):
    out, _ = demo_run
    again = execute(
        demo["workspaces"],
        out,
        ExecuteSettings(limits=replace(DEFAULT_LIMITS, wall_s=3.0)),
        workspace_ids=["or_space_101_build", "or_space_105_build"],
    )
    assert again["executed"] == 0 and again["reused"] == 2
    copy = tmp_path / "ws"
    shutil.copytree(
        demo["workspaces"] / "Workspace_OR" / "build_workspaces" / "instance_101",
        copy / "Workspace_OR" / "build_workspaces" / "instance_101",
    )
    shutil.copytree(out / "records", tmp_path / "out" / "records")
    prog = copy / "Workspace_OR" / "build_workspaces" / "instance_101" / "src" / "solve.py"
    prog.write_text(prog.read_text() + "\nraise SystemExit(3)\n")
    changed = execute(copy, tmp_path / "out", ExecuteSettings(limits=replace(DEFAULT_LIMITS, wall_s=3.0)))
    assert changed["executed"] == 1 and changed["failure_modes"] == {"execution_error": 1}


def test_entry_points(tmp_path):
    ws = tmp_path / "or_space_001_build"
    (ws / "src").mkdir(parents=True)
    assert find_entry(ws, "build")[0] is None
    (ws / "src" / "a.py").write_text("")
    (ws / "src" / "b.py").write_text("")
    assert find_entry(ws, "build")[0] is None
    (ws / "src" / "main.py").write_text("")
    assert find_entry(ws, "build")[0] == ["{python}", "main.py"]
    (ws / "submission.yaml").write_text("command: ['{python}', 'b.py', '{result_file}']\n")
    assert find_entry(ws, "build")[0] == ["{python}", "b.py", "{result_file}"]
    (ws / "submission.yaml").write_text("command: 3\n")
    with pytest.raises(InputError, match="submission.yaml"):
        find_entry(ws, "build")


def test_empty_submission_is_missing_output(tmp_path):
    ws = tmp_path / "or_space_001_build"
    (ws / "src").mkdir(parents=True)
    execute(tmp_path, tmp_path / "out", ExecuteSettings(limits=replace(DEFAULT_LIMITS, wall_s=2.0)))
    pred = json.loads((tmp_path / "out" / "predictions.jsonl").read_text())
    assert pred["failure_mode"] == "missing_output" and pred["status"] == "Missing"
    with pytest.raises(InputError, match="no workspace or_space_002_build"):
        execute(tmp_path, tmp_path / "out", ExecuteSettings(), workspace_ids=["or_space_002_build"])
