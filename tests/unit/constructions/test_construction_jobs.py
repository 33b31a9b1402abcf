"""Construction submissions judged by the pipeline: the workflow's plan (a construction job where a
submission folder exists, else the verdict file, else missing), `tcsexam construction run` (a
solver.yaml program through the real runner and sandbox; construction.txt checked in-process; both
resumable), `tcsexam construction row` (reward, failures as 0 with their status, not_finished,
judge_failed) and the manifest's checker outputs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tcsexam.attempts.construction import checker_outputs, construction_row
from tcsexam.attempts.rows import read_row
from tcsexam.attempts.verdicts import model_verdict_rows
from tcsexam.errors import InputError
from tcsexam.runner.construction import judge_submission
from tcsexam.runner.engine.batch import PoolOptions, RunOptions
from tcsexam.suites import load_suite
from tcsexam.workflow import Plan

ROOT = Path(__file__).resolve().parents[3]
GOLOMB = "construction-golomb-ruler-14"
TASK = str(ROOT / "config" / "tasks" / f"{GOLOMB}.yaml")
OGR14 = "0 4 6 20 35 52 59 77 78 86 89 99 122 127\n"


def _config(tmp_path, **kw):
    cfg = {
        "suite": "lite",
        "protocol": "offline",
        "results_dir": "res",
        "solvers_dir": str(tmp_path / "solvers"),
        "verdicts_dir": str(tmp_path / "verdicts"),
        "models": [{"name": "m", "attempts": ["1", "2"]}],
        "run": {"instances": {}, "task_files": {}},
    }
    cfg.update(kw)
    return cfg


def _tcsexam(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    return subprocess.run(
        [sys.executable, "-m", "tcsexam", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


# ---- planning -------------------------------------------------------------------------------


def test_plan_judges_constructions_with_a_submission(tmp_path, project_root):
    solvers, verdicts = tmp_path / "solvers" / "m", tmp_path / "verdicts" / "m"
    (solvers / GOLOMB / "1").mkdir(parents=True)
    (solvers / GOLOMB / "1" / "construction.txt").write_text(OGR14)
    (solvers / "construction-cap-set-f3-dim8" / "1").mkdir(parents=True)
    (solvers / "construction-cap-set-f3-dim8" / "1" / "solver.yaml").write_text("command: [x]\n")
    (verdicts / "construction-sidon-set-500").mkdir(parents=True)
    (verdicts / "construction-sidon-set-500" / "1.json").write_text("{}")
    (verdicts / GOLOMB).mkdir(parents=True)
    (verdicts / GOLOMB / "1.json").write_text("{}")  # a submission folder wins over a verdict
    plan = Plan(_config(tmp_path), project_root)
    runs = {(p.item, p.attempt): p.row for p in plan.construction_runs()}
    assert runs == {
        (GOLOMB, "1"): f"res/lite/offline/construction/m/{GOLOMB}/1/row.json",
        (
            "construction-cap-set-f3-dim8",
            "1",
        ): "res/lite/offline/construction/m/construction-cap-set-f3-dim8/1/row.json",
    }
    rows = plan.row_files()
    assert all(r in rows for r in runs.values())
    rows_of = {(p.item, p.attempt): p.row for p in plan.planned if p.track == "construction"}
    assert "/tracks/" in rows_of[("construction-sidon-set-500", "1")]
    assert "/missing/" in rows_of[(GOLOMB, "2")] and "/missing/" in rows_of[("construction-sidon-set-500", "2")]

    class W:
        model, item, attempt, task, track = "m", GOLOMB, "1", GOLOMB, "construction"

    assert plan.judged_constructions_arg(W) == f"--judged construction-cap-set-f3-dim8/1 {GOLOMB}/1"
    assert plan.construction_run_inputs(W) == [
        f"{tmp_path}/solvers/m/{GOLOMB}/1/construction.txt",
        f"config/tasks/{GOLOMB}.yaml",
    ]
    assert plan.verdict_files(W) == [f"{tmp_path}/verdicts/m/construction-sidon-set-500/1.json"]
    W.item, W.attempt = "construction-covering-design-c1373", "1"
    assert "construction.txt nor" in plan.missing_reason(W)


def test_check_accepts_a_construction_folder_instead_of_a_verdict(tmp_path, project_root):
    suite = load_suite("lite")
    cfg = _config(tmp_path, models=[{"name": "m", "attempts": ["1"]}])
    for task in suite.tracks["solver"]:
        (tmp_path / "solvers/m" / task / "1").mkdir(parents=True)
        (tmp_path / "solvers/m" / task / "1/solver.yaml").write_text("command: [x]\n")
    for track in ("theorem", "open_conjecture"):
        for item in suite.tracks[track]:
            (tmp_path / "verdicts/m" / item).mkdir(parents=True)
            (tmp_path / "verdicts/m" / item / "1.json").write_text("{}")
    items = suite.tracks["construction"]
    for item in items[1:]:
        (tmp_path / "solvers/m" / item / "1").mkdir(parents=True)
        (tmp_path / "solvers/m" / item / "1/construction.txt").write_text("1\n")
    with pytest.raises(InputError, match=rf"{items[0]}.*solver.yaml, .*construction.txt or"):
        Plan(cfg, project_root).check()
    (tmp_path / "solvers/m" / items[0] / "1").mkdir(parents=True)
    (tmp_path / "solvers/m" / items[0] / "1/solver.yaml").write_text("command: [x]\n")
    Plan(cfg, project_root).check()


def test_verdict_rows_leave_judged_constructions_out(tmp_path):
    rows = model_verdict_rows("m", load_suite("lite"), tmp_path, ["1"], judged=frozenset({f"{GOLOMB}/1"}))
    items = [r.item for r in rows if r.track == "construction"]
    assert GOLOMB not in items and len(items) == 4
    missing = [r for r in rows if r.track == "construction"]
    assert all(r.score_status == "missing" and "no solver.yaml or construction.txt" in r.note for r in missing)


# ---- judging a submission -------------------------------------------------------------------


def test_construction_txt_is_checked_and_reused(tmp_path):
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "construction.txt").write_text("# OGR-14\n" + OGR14)
    out = tmp_path / "out" / "records.json"
    rec = judge_submission(task=TASK, submission=sub, output=out, attempt="1")
    assert (rec["status"], rec["A"], rec["reward"]) == ("ok", 127.0, 1.0)
    assert rec["extra"]["submission"] == "construction.txt" and rec["digest"].startswith("hmac-sha256:")
    stored = next((tmp_path / "out" / "records").glob("*.json"))
    mtime = stored.stat().st_mtime_ns
    assert judge_submission(task=TASK, submission=sub, output=out, attempt="1") == rec
    assert stored.stat().st_mtime_ns == mtime  # resumed: the stored record is reused
    (sub / "construction.txt").write_text(OGR14.replace("127", "126"))  # 126 - 122 = 4 - 0
    again = judge_submission(task=TASK, submission=sub, output=out, attempt="1")
    assert again["status"] == "certificate_failed" and again["reward"] == 0.0 and again["A"] is None


def test_program_runs_through_the_runner_under_limits(tmp_path):
    sub = tmp_path / "prog"
    sub.mkdir()
    (sub / "solver.yaml").write_text('command: ["python3", "build.py", "{instance}", "{solution}"]\n')
    (sub / "build.py").write_text(
        "import sys, yaml\n"
        "p = yaml.safe_load(open(sys.argv[1]))['parameters']\n"
        "assert p == {'marks': 14}\n"
        f"open(sys.argv[2], 'w').write({OGR14!r})\n"
    )
    out = tmp_path / "o" / "records.json"
    proc = _tcsexam(
        "construction",
        "run",
        "--task",
        TASK,
        "--submission",
        str(sub),
        "--attempt",
        "1",
        "--output",
        str(out),
        "--no-ray",
        "--sandbox",
        "local",
        "--no-progress",
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    (rec,) = json.loads(out.read_text())
    assert (rec["status"], rec["A"], rec["reward"], rec["sandbox"]) == ("ok", 127.0, 1.0, "local")
    assert rec["limiter"] and rec["wall_s"] is not None and rec["key"].startswith("sha256:")
    # a program that sleeps past the task's limit: timeout, recorded
    (sub / "build.py").write_text("import time\ntime.sleep(60)\n")
    task = tmp_path / "short.yaml"
    text = (
        Path(TASK)
        .read_text()
        .replace("wall_s: 60", "wall_s: 1")
        .replace("instance_dir: config/tasks", f"instance_dir: {ROOT}/config/tasks")
    )
    task.write_text(text)
    local = RunOptions(sandbox="local", progress=False, pool=PoolOptions(use_ray=False))
    rec = judge_submission(
        task=task, submission=sub, output=tmp_path / "t" / "records.json", attempt="1", options=local
    )
    assert rec["status"] == "timeout"


def test_bad_submissions_are_input_errors(tmp_path):
    with pytest.raises(InputError, match="not found"):
        judge_submission(task=TASK, submission=tmp_path / "nope", output=tmp_path / "r.json", attempt="1")
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="neither solver.yaml"):
        judge_submission(task=TASK, submission=tmp_path / "empty", output=tmp_path / "r.json", attempt="1")
    both = tmp_path / "both"
    both.mkdir()
    (both / "solver.yaml").write_text("command: [x]\n")
    (both / "construction.txt").write_text("1\n")
    with pytest.raises(InputError, match="both solver.yaml and construction.txt"):
        judge_submission(task=TASK, submission=both, output=tmp_path / "r.json", attempt="1")
    with pytest.raises(InputError, match="not a construction task"):
        judge_submission(task="maxcut-mqlib", submission=both, output=tmp_path / "r.json", attempt="1")


# ---- the row --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text,status,score",
    [
        (OGR14, "ok", 1.0),
        (" ".join(str(2**i) for i in range(14)) + "\n", "ok", 0.0),  # length 8191: worse than the baseline
        ("0 1 2 3\n", "certificate_failed", 0.0),
        ("not a ruler\n", "invalid", 0.0),
    ],
)
def test_rows_from_records(tmp_path, text, status, score):
    sub = tmp_path / "s"
    sub.mkdir()
    (sub / "construction.txt").write_text(text)
    out = tmp_path / "r" / "records.json"
    judge_submission(task=TASK, submission=sub, output=out, attempt="1")
    row = construction_row(
        task=TASK,
        model="m",
        attempt="1",
        records=out,
        checker_output=tmp_path / "r" / "checker.json",
        output=tmp_path / "r" / "row.json",
    )
    assert (row.score_status, row.score, row.score_type) == ("valid", score, "original_task_score")
    assert read_row(tmp_path / "r" / "row.json") == row
    checker = json.loads((tmp_path / "r" / "checker.json").read_text())
    assert checker["status"] == status and checker["checker"] == "tcsexam golomb_ruler checker v2"
    assert checker["submission"] == "construction.txt" and checker["digest"]
    if status != "ok":
        assert status in row.note and checker["value"] is None and checker["reward"] == 0.0


def test_a_failed_run_keeps_reward_zero(tmp_path):
    """A timeout's record carries no reward (no object was checked); its checker output says 0.0."""
    from tcsexam.records import InstanceRecord
    from tcsexam.records.key import ensure_key

    rec = InstanceRecord(instance="golomb-ruler-14", status="timeout", message="walltime limit", attempt="1")
    out = tmp_path / "records.json"
    out.write_text(json.dumps([rec.to_dict(ensure_key(tmp_path))]))
    row = construction_row(
        task=TASK, model="m", attempt="1", records=out, checker_output=tmp_path / "c.json", output=tmp_path / "row.json"
    )
    checker = json.loads((tmp_path / "c.json").read_text())
    assert (row.score, row.score_status) == (0.0, "valid") and "timeout" in row.note
    assert (checker["status"], checker["value"], checker["reward"]) == ("timeout", None, 0.0)


def test_rows_without_or_with_bad_records(tmp_path):
    row = construction_row(
        task=TASK,
        model="m",
        attempt="1",
        records=tmp_path / "none.json",
        checker_output=tmp_path / "c.json",
        output=tmp_path / "row.json",
    )
    assert row.score_status == "not_finished" and row.score is None
    rec = {"instance": "golomb-ruler-14", "status": "infrastructure_error", "message": "sandbox died"}
    from tcsexam.records import InstanceRecord
    from tcsexam.records.key import ensure_key

    key = ensure_key(tmp_path)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([InstanceRecord(**rec).to_dict(key)]))
    row = construction_row(
        task=TASK, model="m", attempt="1", records=bad, checker_output=tmp_path / "c.json", output=tmp_path / "row.json"
    )
    assert row.score_status == "judge_failed" and "sandbox died" in row.note
    edited = InstanceRecord(instance="golomb-ruler-14", status="ok", A=127.0, reward=1.0).to_dict(key)
    edited["reward"] = 5.0  # edited after it was written
    bad.write_text(json.dumps([edited]))
    row = construction_row(
        task=TASK, model="m", attempt="1", records=bad, checker_output=tmp_path / "c.json", output=tmp_path / "row.json"
    )
    assert row.score_status == "judge_failed" and "integrity" in row.note
    other = InstanceRecord(instance="golomb-ruler-14", status="ok", A=127.0, reward=1.0, attempt="2").to_dict(key)
    bad.write_text(json.dumps([other]))
    row = construction_row(
        task=TASK, model="m", attempt="1", records=bad, checker_output=tmp_path / "c.json", output=tmp_path / "row.json"
    )
    assert row.score_status == "judge_failed" and "attempt '2'" in row.note


def test_checker_outputs_for_the_manifest(tmp_path):
    d = tmp_path / "run" / "construction" / "m" / GOLOMB / "1"
    d.mkdir(parents=True)
    (d / "checker.json").write_text(json.dumps({"model": "m", "status": "ok", "reward": 1.0}))
    assert checker_outputs(tmp_path / "run") == {"m": {GOLOMB: {"1": {"status": "ok", "reward": 1.0}}}}


def test_the_row_commands_log_line_has_a_time_and_a_level(tmp_path, capsys):
    """`tcsexam construction row` (the rule's row.log) logs like every other command."""
    import re

    from tcsexam.cli import main

    sub = tmp_path / "s"
    sub.mkdir()
    (sub / "construction.txt").write_text(OGR14)
    out = tmp_path / "r" / "records.json"
    judge_submission(task=TASK, submission=sub, output=out, attempt="1")
    capsys.readouterr()
    rc = main(
        [
            "construction",
            "row",
            "--task",
            TASK,
            "--model",
            "m",
            "--attempt",
            "1",
            "--records",
            str(out),
            "--checker-output",
            str(tmp_path / "c.json"),
            "--output",
            str(tmp_path / "row.json"),
        ]
    )
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert rc == 0 and captured.out == "" and len(lines) == 1, captured
    assert re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ INFO +tcsexam construction row: m,construction,", lines[0])
