"""Proofs in the workflow's plan: a proof job where `proof.v` exists, else the verdict file, else a
missing row; the config check accepts a proof folder instead of a verdict; the verdict-rows job
leaves the checked proofs out. No Coq runs here (the checker itself: tests/unit/runner/
test_proof_hostile.py)."""

from __future__ import annotations

import pytest

from tcsexam.attempts.verdicts import model_verdict_rows
from tcsexam.errors import InputError
from tcsexam.suites import load_suite
from tcsexam.workflow import Plan

THM = "theorem-sum-odds-square"
CONJ = "conjecture-euler-prime-polynomial"


def _config(tmp_path, attempts=("1", "2")):
    return {
        "suite": "lite",
        "protocol": "offline",
        "results_dir": "res",
        "solvers_dir": str(tmp_path / "solvers"),
        "verdicts_dir": str(tmp_path / "verdicts"),
        "models": [{"name": "m", "attempts": list(attempts)}],
        "run": {"instances": {}, "task_files": {}},
    }


def test_plan_checks_proofs_with_a_submission(tmp_path, project_root):
    solvers, verdicts = tmp_path / "solvers" / "m", tmp_path / "verdicts" / "m"
    for item in (THM, CONJ):
        (solvers / item / "1").mkdir(parents=True)
        (solvers / item / "1" / "proof.v").write_text("(* a proof *)\n")
    (verdicts / THM).mkdir(parents=True)
    (verdicts / THM / "1.json").write_text("{}")  # the proof folder wins over a verdict
    (verdicts / "theorem-gauss-sum").mkdir(parents=True)
    (verdicts / "theorem-gauss-sum" / "1.json").write_text("{}")  # an external checker's
    plan = Plan(_config(tmp_path), project_root)
    runs = {(p.track, p.item, p.attempt): p.row for p in plan.proof_runs()}
    assert runs == {
        ("theorem", THM, "1"): f"res/lite/offline/proof/m/{THM}/1/row.json",
        ("open_conjecture", CONJ, "1"): f"res/lite/offline/proof/m/{CONJ}/1/row.json",
    }
    assert all(r in plan.row_files() for r in runs.values())
    rows_of = {(p.item, p.attempt): p.row for p in plan.planned if p.track == "theorem"}
    assert "/tracks/" in rows_of[("theorem-gauss-sum", "1")] and "/missing/" in rows_of[(THM, "2")]

    class W:
        model, item, attempt, track = "m", THM, "1", "theorem"

    assert plan.judged_constructions_arg(W) == f"--judged {THM}/1 {CONJ}/1"
    assert plan.proof_check_inputs(W) == [
        f"{tmp_path}/solvers/m/{THM}/1/proof.v",
        f"config/tasks/{THM}.yaml",
        f"config/tasks/proofs/{THM}.v",
    ]
    assert plan.proof_runtime_min(THM) >= 5 and plan.proof_mem_mb(THM) > 2048
    W.item, W.attempt = "theorem-rev-involutive", "1"
    assert "proof.v nor a checker verdict" in plan.missing_reason(W)


def test_check_accepts_a_proof_folder_instead_of_a_verdict(tmp_path, project_root):
    suite = load_suite("lite")
    cfg = _config(tmp_path, attempts=("1",))
    for task in suite.tracks["solver"]:
        (tmp_path / "solvers/m" / task / "1").mkdir(parents=True)
        (tmp_path / "solvers/m" / task / "1/solver.yaml").write_text("command: [x]\n")
    for item in suite.tracks["construction"]:
        (tmp_path / "solvers/m" / item / "1").mkdir(parents=True)
        (tmp_path / "solvers/m" / item / "1/construction.txt").write_text("1\n")
    (tmp_path / "verdicts").mkdir()
    items = [*suite.tracks["theorem"], *suite.tracks["open_conjecture"]]
    for item in items[1:]:
        (tmp_path / "solvers/m" / item / "1").mkdir(parents=True)
        (tmp_path / "solvers/m" / item / "1/proof.v").write_text("\n")
    with pytest.raises(InputError, match=rf"{items[0]}.*proof.v or .*verdicts/m/{items[0]}/1.json"):
        Plan(cfg, project_root).check()
    (tmp_path / "solvers/m" / items[0] / "1").mkdir(parents=True)
    (tmp_path / "solvers/m" / items[0] / "1/proof.v").write_text("\n")
    Plan(cfg, project_root).check()


def test_verdict_rows_leave_checked_proofs_out(tmp_path):
    rows = model_verdict_rows("m", load_suite("lite"), tmp_path, ["1"], judged=frozenset({f"{THM}/1"}))
    theorems = [r for r in rows if r.track == "theorem"]
    assert THM not in [r.item for r in theorems] and len(theorems) == 4
    assert all("no proof: no proof.v submission" in r.note for r in theorems)
