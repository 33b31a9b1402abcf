"""Failure attribution (one closed mode per result), the solver a submission used, and the
condition a prediction file belongs to."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tcsexam.errors import InputError
from tcsexam.orspace.conditions import staged_condition
from tcsexam.orspace.objectives import RESULT_MODES, FailureMode, load_predictions, score_objectives
from tcsexam.orspace.release import load_release
from tcsexam.orspace.solvers import detect_solver


def test_every_demo_result_has_exactly_one_mode(demo, tmp_path):
    release = load_release(demo["release"])
    preds = {
        "or_space_101_build": {
            "status": "Optimal",
            "objective": release.oracle["or_space_101_build"].reference_objective,
        },
        "or_space_102_build": {"status": "Optimal", "objective": 1.0},
        "or_space_103_build": {"status": "Infeasible", "objective": None},
        "or_space_105_build": {"status": "Error", "objective": None, "failure_mode": "execution_error"},
        "or_space_106_build": {"status": "Timeout", "objective": None, "failure_mode": "timeout"},
        "or_space_108_build": {"status": "Unbounded", "objective": None},
        "or_space_101_revise": {"status": "Not Optimal", "objective": 1.0},
        "or_space_102_revise": {"status": "Optimal", "objective": None},
    }
    preds = {w: {"workspace_id": w, **p} for w, p in preds.items()}
    summary = score_objectives(release, preds)
    modes = {r["workspace_id"]: r["failure_mode"] for r in summary["rows"]}
    assert all(m in RESULT_MODES for m in modes.values())
    assert modes["or_space_101_build"] == "none"
    assert modes["or_space_102_build"] == "wrong_objective"
    assert modes["or_space_103_build"] == "infeasible"
    assert modes["or_space_105_build"] == "execution_error"
    assert modes["or_space_106_build"] == "timeout"
    assert modes["or_space_107_build"] == "missing_output"  # no prediction
    assert modes["or_space_108_build"] == "unbounded"
    assert modes["or_space_101_revise"] == "not_optimal"
    assert modes["or_space_102_revise"] == "missing_output"
    table = {r["failure_mode"]: r for r in summary["failure_table"]}
    assert list(table) == list(RESULT_MODES) == [m for m in FailureMode if m != FailureMode.INFRASTRUCTURE_ERROR]
    assert all(type(m) is FailureMode for m in modes.values())  # typed rows, written as their strings
    assert sum(r["count"] for r in table.values()) == summary["n"]
    assert table["none"]["count"] == 1 and table["none"]["share"] == pytest.approx(1 / summary["n"])


def test_a_prediction_file_of_two_conditions_is_refused(tmp_path):
    path = tmp_path / "p.jsonl"
    path.write_text(
        json.dumps({"workspace_id": "or_space_001_build", "status": "Optimal", "objective": 1, "condition": "a"})
        + "\n"
        + json.dumps({"workspace_id": "or_space_002_build", "status": "Optimal", "objective": 1, "condition": "b"})
        + "\n"
    )
    with pytest.raises(InputError, match="line 2: or_space_002_build: condition 'b' differs"):
        load_predictions(path, {"or_space_001_build", "or_space_002_build"})


def test_staged_condition_is_checked(tmp_path):
    assert staged_condition(tmp_path) is None
    assert staged_condition(tmp_path, "revise-code_flat_none") == "revise-code_flat_none"
    (tmp_path / "manifest.json").write_text(
        json.dumps({"condition": {"view": "revise-all", "interface": "flat", "context": "both"}})
    )
    assert staged_condition(tmp_path) == "revise-all_flat_both"
    with pytest.raises(InputError, match="staged under condition revise-all_flat_both, not"):
        staged_condition(tmp_path, "revise-all_filesystem_both")


def src_with(tmp_path: Path, code: str) -> Path:
    src = tmp_path / "src"
    src.mkdir(exist_ok=True)
    (src / "main.py").write_text(code)
    return src


@pytest.mark.parametrize(
    ("code", "solver"),
    [
        ("import gurobipy as gp\nm = gp.Model()\n", "gurobi"),
        ("from coptpy import Envr\n", "copt"),
        ("import highspy\n", "highs"),
        ("import pulp\nprob.solve(pulp.PULP_CBC_CMD(msg=0))\n", "cbc"),
        ("import pulp\nprob.solve(pulp.HiGHS(msg=False))\n", "highs"),
        ("import pulp\nprob.solve(pulp.GUROBI(msg=False))\n", "gurobi"),
        ("import highspy\nimport gurobipy\n", "gurobi+highs"),
        ("print('OBJECTIVE_VALUE: 3')\n", "unknown"),
        ("# import gurobipy is only a comment here\nimport numpy\n", "unknown"),
        # every module of an import list, dotted modules
        ("import os, signal, highspy\n", "highs"),
        ("import time, pulp\n", "cbc"),
        ("import numpy as np, gurobipy as gp\n", "gurobi"),
        ("from highspy.highs import Highs\n", "highs"),
        ("from pulp.apis import HiGHS_CMD\n", "highs"),
    ],
)
def test_solver_from_imports(tmp_path, code, solver):
    assert detect_solver(None, "", src_with(tmp_path, code)) == solver


def test_solver_from_result_file_and_banner_first(tmp_path):
    src = src_with(tmp_path, "import pulp\n")
    assert detect_solver('{"status": "Optimal", "solver": "COPT"}', "", src) == "copt"
    assert detect_solver(None, "Running HiGHS 1.7.0 (git hash: x)\n", src) == "highs"
    assert detect_solver(None, "Gurobi Optimizer version 12.0.0 build v12\n", src) == "gurobi"
    assert detect_solver("not json", "", src) == "cbc"
