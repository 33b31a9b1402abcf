"""The workflow plan (rows and jobs a config asks for), cohort.json and the report plots."""

from __future__ import annotations

import json

import pytest

from tcsexam.attempts.cohort import build_cohort, parse_model_plans
from tcsexam.attempts.plots import PLOTS, make_plots
from tcsexam.attempts.rows import AttemptRow, failed_row, table_text
from tcsexam.errors import InputError, UsageError
from tcsexam.workflow import Plan


def _config(tmp_path, **kw):
    cfg = {
        "suite": "lite",
        "protocol": "offline",
        "results_dir": "res",
        "solvers_dir": str(tmp_path / "solvers"),
        "verdicts_dir": str(tmp_path / "verdicts"),
        "models": [{"name": "a", "attempts": ["1", "2"]}, {"name": "b", "attempts": [1]}],
        "run": {"instances": {}, "task_files": {}},
    }
    cfg.update(kw)
    return cfg


def test_plan_rows_solver_jobs_and_missing(tmp_path, project_root):
    (tmp_path / "solvers/a/sat-satlib/1").mkdir(parents=True)
    (tmp_path / "solvers/a/sat-satlib/1/solver.yaml").write_text("command: [x]\n")
    plan = Plan(_config(tmp_path), project_root)
    assert plan.out == "res/lite/offline"
    assert plan.reference == "lite"
    assert len(plan.planned) == 3 * 20  # (2 + 1) attempts x 20 Lite tasks
    runs = plan.solver_runs()
    assert [(p.model, p.item, p.attempt) for p in runs] == [("a", "sat-satlib", "1")]
    assert plan.records_files() == ["res/lite/offline/solver/a/sat-satlib/1/records.json"]
    rows = plan.row_files()
    assert "res/lite/offline/solver/a/sat-satlib/1/row.json" in rows
    assert "res/lite/offline/missing/solver/a/sat-satlib/2/row.json" in rows
    assert rows[-2:] == ["res/lite/offline/tracks/a/rows.json", "res/lite/offline/tracks/b/rows.json"]
    assert len(rows) == 3 * 5 + 2
    assert plan.cohort_models() == "a=2 b=1"

    class W:
        model, track, item, attempt = "b", "solver", "tsp-tsplib", "1"

    assert "solvers/b/tsp-tsplib/1/solver.yaml does not exist" in plan.missing_reason(W)
    assert plan.runtime_min("sat-satlib", 1) >= 5 and plan.mem_mb("sat-satlib", 2) == 2 * 1024 + 1536


def test_plan_instances_and_checks(tmp_path, project_root):
    plan = Plan(_config(tmp_path, run={"instances": {"sat-satlib": ["uf50-01", "uuf50-01"]}}), project_root)
    plan.check()
    assert plan.instances("sat-satlib") == ["uf50-01", "uuf50-01"]
    assert plan.instances_arg("sat-satlib") == "--instances uf50-01 uuf50-01"
    assert plan.instances_arg("tsp-tsplib") == ""
    with pytest.raises(InputError, match="unknown instance"):
        Plan(_config(tmp_path, run={"instances": {"sat-satlib": ["nope"]}}), project_root).check()
    with pytest.raises(InputError, match="listed twice"):
        Plan(_config(tmp_path, models=[{"name": "a"}, {"name": "a"}]), project_root)


def test_cohort_reads_the_reference_id(project_root):
    cohort = build_cohort(
        "lite", "offline", str(project_root / "config/test/reference.json"), parse_model_plans(["m=2", "n=1"])
    )
    assert cohort["solver_reference_id"] == "tcsexam-test-k3-v2"
    assert cohort["models"] == {"m": {"attempts_per_task": 2}, "n": {"attempts_per_task": 1}}
    for bad in (["m"], ["m=0"], ["m=x"], ["m=1", "m=2"]):
        with pytest.raises(UsageError):
            parse_model_plans(bad)


def test_cohort_refuses_a_reference_without_the_suite_tasks(tmp_path):
    ref = tmp_path / "ref.json"
    ref.write_text(
        json.dumps(
            {
                "schema_version": 1,
                "reference_id": "r",
                "scale_floors": {"relative": 0.02, "absolute": 1e-9},
                "tasks": {"sat-satlib": {"kind": "solve", "direction": "maximize", "instances": {"x": [1, 1]}}},
            }
        )
    )
    with pytest.raises(InputError, match="lacks suite 'lite' Solver task"):
        build_cohort("lite", "offline", str(ref), {"m": 1})


def test_plots_are_written(tmp_path):
    index = {
        "suite": "lite",
        "solver_protocol": "offline",
        "models": {
            "m1": {
                "status": "complete",
                "index": 61.5,
                "track_means": {"theorem": 1.0, "solver": 0.5, "construction": 0.9, "open_conjecture": 0.2},
            },
            "m2": {
                "status": "incomplete",
                "index": None,
                "track_means": {"theorem": 0.0, "solver": None, "construction": 0.3, "open_conjecture": 0.0},
            },
        },
    }
    (tmp_path / "index.json").write_text(json.dumps(index))
    rows = [
        AttemptRow("m1", "solver", "sat-satlib", "1", 0.5, "selected", "valid", "fixed_reference_relative", "offline"),
        failed_row("m2", "solver", "sat-satlib", "1", "judge_failed", "x", "offline"),
    ]
    (tmp_path / "attempts.csv").write_text(table_text(rows))
    d = tmp_path / "solver/m1/sat-satlib/1"
    d.mkdir(parents=True)
    (d / "relative.json").write_text(json.dumps({"instances": [{"score": 0.5}, {"score": 0.0}]}))
    (d / "records.json").write_text(
        json.dumps([{"instance": "x", "status": "ok"}, {"instance": "y", "status": "timeout"}])
    )
    written = make_plots(tmp_path / "index.json", tmp_path / "attempts.csv", tmp_path / "solver", tmp_path / "plots")
    assert [p.name for p in written] == list(PLOTS)
    for p in written:
        assert p.read_bytes().startswith(b"\x89PNG")
    (tmp_path / "bad.json").write_text("[]")
    with pytest.raises(InputError, match="not an index.json"):
        make_plots(tmp_path / "bad.json", tmp_path / "attempts.csv", tmp_path / "solver", tmp_path / "p2")
