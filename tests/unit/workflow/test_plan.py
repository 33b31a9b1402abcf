"""The workflow plan: the rows and jobs a config asks for, and the checks that stop a config the
rules cannot run (at DAG construction, so `snakemake -n` shows them)."""

from __future__ import annotations

import json

import pytest

from tcsexam.errors import InputError
from tcsexam.runner.solver.candidate import load_candidate
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
    (tmp_path / "solvers").mkdir()
    (tmp_path / "verdicts").mkdir()
    (tmp_path / "solvers/a").mkdir()
    (tmp_path / "verdicts/b").mkdir()
    cfg = _config(tmp_path, run={"instances": {"sat-satlib": ["uf50-01", "uuf50-01"]}}, allow_missing=True)
    plan = Plan(cfg, project_root)
    plan.check()
    assert plan.instances("sat-satlib") == ["uf50-01", "uuf50-01"]
    assert plan.instances_arg("sat-satlib") == "--instances uf50-01 uuf50-01"
    assert plan.instances_arg("tsp-tsplib") == ""
    with pytest.raises(InputError, match="unknown instance"):
        Plan(_config(tmp_path, run={"instances": {"sat-satlib": ["nope"]}}), project_root).check()
    with pytest.raises(InputError, match="listed twice"):
        Plan(_config(tmp_path, models=[{"name": "a"}, {"name": "a"}]), project_root)


def test_plan_full_generated_stamps_and_reference_carry(tmp_path, project_root):
    carry = {"reference": "references/archive/tcsexam-bundled-k3-v2.json", "tasks": ["sat-satlib", "tsp-tsplib"]}
    build = {"id": "v9", "carry": carry, "outputs": {"full": "f.json", "lite": "l.json"}}
    plan = Plan(_config(tmp_path, suite="full", reference_build=build), project_root)
    plan.check(reference_target=True)  # the reference target: no evaluation reference or submissions read
    assert "sat-random3" in plan.generated_tasks and "sat-satlib" not in plan.generated_tasks
    stamp = plan.generated_stamp("sat-random3")
    assert stamp == "references/instances/generated/sat-random3/.generated-sat-random3.json"
    assert plan.generated_stamp("sat-satlib") is None and plan.generated_inputs("sat-satlib") == []

    class W:
        model, task, attempt = "a", "sat-random3", "1"

    assert stamp in plan.run_inputs(W)
    assert plan.reference_carried == ["sat-satlib", "tsp-tsplib"]
    assert "sat-satlib" not in plan.reference_tasks and "maxcut-mqlib" in plan.reference_tasks
    assert plan.reference_task_file("sat-satlib") == "res/reference/v9/sat-satlib/carried-sat-satlib.json"
    assert plan.reference_task_file("sat-random3") == "res/reference/v9/sat-random3/reference-sat-random3.json"
    # one reference program per problem serves its tasks, each task with its own command where it has one
    assert {plan.reference_candidate(t) for t in ("tsp-tsplib", "tsp-random", "tsp-random-large")} == {
        "solvers/reference/tsp"
    }
    tsp = project_root / "solvers/reference/tsp"
    assert load_candidate(tsp, "tsp-random").command[4] == "0.6"
    assert load_candidate(tsp, "tsp-tsplib").command[4] == load_candidate(tsp).command[4] == "{time_limit}"
    for bad, needle in (
        ({**carry, "tasks": ["nope"]}, "in no reference output's suite"),
        ({"tasks": ["sat-satlib"]}, "need a reference file"),
        ({**carry, "reference": "missing.json"}, "does not exist"),
    ):
        with pytest.raises(InputError, match=needle):
            Plan(_config(tmp_path, suite="full", reference_build={**build, "carry": bad}), project_root).check(
                reference_target=True
            )


def _submissions(root, model="m", tasks=None, items=None):
    from tcsexam.suites import load_suite

    suite = load_suite("lite")
    for task in tasks if tasks is not None else suite.tracks["solver"]:
        (root / "solvers" / model / task / "1").mkdir(parents=True, exist_ok=True)
        (root / "solvers" / model / task / "1" / "solver.yaml").write_text("command: [x]\n")
    other = [i for t in ("theorem", "construction", "open_conjecture") for i in suite.tracks[t]]
    for item in items if items is not None else other:
        (root / "verdicts" / model / item).mkdir(parents=True, exist_ok=True)
        (root / "verdicts" / model / item / "1.json").write_text("{}")
    (root / "solvers").mkdir(exist_ok=True)
    (root / "verdicts").mkdir(exist_ok=True)


def _cfg(root, **kw):
    cfg = _config(root, models=[{"name": "m", "attempts": ["1"]}])
    cfg.update(kw)
    return cfg


def test_check_accepts_a_complete_cohort_and_a_missing_attempt(tmp_path, project_root):
    _submissions(tmp_path)
    Plan(_cfg(tmp_path), project_root).check()
    # attempt 2 never submitted: a `missing` row, not a config error (config/incomplete.yaml)
    Plan(_cfg(tmp_path, models=[{"name": "m", "attempts": ["1", "2"]}]), project_root).check()


@pytest.mark.parametrize(
    "change, expected",
    [
        (lambda c, r: c.update(models=[{"name": "n"}]), "model 'n' has no submissions"),
        (
            lambda c, r: c.update(solvers_dir=str(r / "solverz")),
            "config solvers_dir: folder .*solverz not found.*'solvers'",
        ),
        (lambda c, r: c.update(verdicts_dir=str(r / "verdict")), "config verdicts_dir: .*did you mean 'verdicts'"),
        (
            lambda c, r: c.update(reference=str(r / "nope.json")),
            "config reference: reference file .*nope.json not found",
        ),
    ],
)
def test_check_fails_fast_on_typos(tmp_path, project_root, change, expected):
    _submissions(tmp_path)
    cfg = _cfg(tmp_path)
    change(cfg, tmp_path)
    with pytest.raises(InputError, match=expected):
        Plan(cfg, project_root).check()


def test_check_names_model_task_and_path_and_suggests(tmp_path, project_root):
    _submissions(tmp_path, tasks=["maxcut-mqlib", "sat-satlib", "tsp-tsplib", "maxsat-wcnf"])
    (tmp_path / "solvers/m/coloring-dimac/1").mkdir(parents=True)
    with pytest.raises(InputError) as err:
        Plan(_cfg(tmp_path), project_root).check()
    msg = str(err.value)
    assert "model 'm' task 'coloring-dimacs'" in msg and "solvers/m/coloring-dimacs/1/solver.yaml" in msg
    assert "did you mean folder 'coloring-dimac'" in msg
    # a missing verdict folder likewise, unless missing rows are allowed
    _submissions(tmp_path, tasks=["coloring-dimacs"], items=[])
    (tmp_path / "verdicts/m/theorem-sum-odds-square/1.json").unlink()
    with pytest.raises(InputError, match="item 'theorem-sum-odds-square'.*verdicts/m/theorem-sum-odds-square/1.json"):
        Plan(_cfg(tmp_path), project_root).check()
    Plan(_cfg(tmp_path, allow_missing=True), project_root).check()


def test_check_refuses_a_reference_without_the_suite_tasks(tmp_path, project_root):
    _submissions(tmp_path)
    ref = json.loads((project_root / "config/test/reference.json").read_text())
    del ref["tasks"]["sat-satlib"]
    (tmp_path / "ref.json").write_text(json.dumps(ref))
    with pytest.raises(InputError, match="does not cover Solver task.*sat-satlib"):
        Plan(_cfg(tmp_path, reference=str(tmp_path / "ref.json")), project_root).check()
    (tmp_path / "ref.json").write_text('{"schema_version": 1, "reference_id": ')
    with pytest.raises(InputError, match="ref.json"):
        Plan(_cfg(tmp_path, reference=str(tmp_path / "ref.json")), project_root).check()
