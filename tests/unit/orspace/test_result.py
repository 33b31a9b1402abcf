"""Status/objective derivation, and the PuLP pitfall with PuLP's bundled CBC for real."""

from __future__ import annotations

import ast
import json
import random
import sys
from pathlib import Path

import pulp
import pytest

from tcsexam.orspace import capture, result
from tcsexam.orspace.result import derive, highs_result, pulp_result


def market_split(m: int = 4, n: int = 30, seed: int = 1) -> pulp.LpProblem:
    """Cornuejols-Dawande market split with slack: always feasible, very hard to prove optimal."""
    rng = random.Random(seed)
    a = [[rng.randint(0, 99) for _ in range(n)] for _ in range(m)]
    prob = pulp.LpProblem("market_split", pulp.LpMinimize)
    x = [pulp.LpVariable(f"x{j}", cat="Binary") for j in range(n)]
    sp = [pulp.LpVariable(f"sp{i}", lowBound=0) for i in range(m)]
    sm = [pulp.LpVariable(f"sm{i}", lowBound=0) for i in range(m)]
    prob += pulp.lpSum(sp) + pulp.lpSum(sm)
    for i in range(m):
        prob += pulp.lpSum(a[i][j] * x[j] for j in range(n)) + sp[i] - sm[i] == sum(a[i]) // 2
    return prob


def test_node_limited_cbc_optimal_lpstatus_is_not_optimal():
    # a node limit, not a time limit: the outcome must not depend on the machine's speed
    prob = market_split()
    prob.solve(pulp.PULP_CBC_CMD(msg=0, maxNodes=1))
    assert pulp.LpStatus[prob.status] == "Optimal"  # the pitfall: PuLP says Optimal ...
    assert prob.sol_status == pulp.LpSolutionIntegerFeasible  # ... but CBC only found a solution
    result = pulp_result(prob)
    assert result["status"] == "Not Optimal" and result["proven_optimal"] is False
    # a program that naively reports LpStatus but passes sol_status along is caught by the harness
    naive = {
        "status": pulp.LpStatus[prob.status],
        "objective": pulp.value(prob.objective),
        "sol_status": prob.sol_status,
    }
    assert derive(json.dumps(naive), "", True)["status"] == "Not Optimal"


def test_proven_optimal_lp_is_optimal():
    prob = pulp.LpProblem("lp", pulp.LpMaximize)
    x, y = pulp.LpVariable("x", 0, 4), pulp.LpVariable("y", 0, 3)
    prob += 3 * x + 2 * y
    prob += x + y <= 5
    prob.solve(pulp.PULP_CBC_CMD(msg=0))
    result = pulp_result(prob)
    assert result["status"] == "Optimal" and result["objective"] == pytest.approx(14.0)


def test_highs_node_limit_is_not_optimal():
    import highspy

    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("mip_max_nodes", 1)  # a node limit: the same outcome at any speed
    # the same market-split model, built directly in HiGHS
    rng = random.Random(1)
    a = [[rng.randint(0, 99) for _ in range(30)] for _ in range(4)]
    import numpy as np

    n = 30 + 8
    h.addVars(n, np.zeros(n), np.array([1.0] * 30 + [highspy.kHighsInf] * 8))
    h.changeColsCost(n, np.arange(n, dtype=np.int32), np.array([0.0] * 30 + [1.0] * 8))
    h.changeColsIntegrality(30, np.arange(30, dtype=np.int32), np.array([highspy.HighsVarType.kInteger] * 30))
    for i in range(4):
        idx = np.array(list(range(30)) + [30 + i, 34 + i], dtype=np.int32)
        rhs = sum(a[i]) // 2
        h.addRow(rhs, rhs, len(idx), idx, np.array(a[i] + [1.0, -1.0], dtype=float))
    h.run()
    result = highs_result(h)
    assert result["status"] != "Optimal" and result["proven_optimal"] is False
    assert (
        derive(json.dumps({"status": "Optimal", "objective": 1.0, "model_status": result["model_status"]}), "", True)[
            "status"
        ]
        == "Not Optimal"
    )


@pytest.mark.parametrize(
    "result_text, stdout, exit_ok, expected",
    [
        (None, "Set parameter\nOBJECTIVE_VALUE: 263280.0\n", True, ("Optimal", 263280.0, "objective_line_only")),
        (None, "OBJECTIVE_VALUE: 263280.0\n", False, (None, 263280.0, "none")),
        (
            None,
            "Status: Optimal\nOBJECTIVE_VALUE: 5\nOBJECTIVE_VALUE: 7\n",
            True,
            ("Optimal", 7.0, "stdout_status_line"),
        ),
        (None, "OBJECTIVE_STATUS: Infeasible\n", True, ("Infeasible", None, "stdout_status_line")),
        (
            None,
            "Result - Stopped on time limit\nStatus: Optimal\nOBJECTIVE_VALUE: 3\n",
            True,
            ("Not Optimal", 3.0, "stdout_status_line"),
        ),
        (None, "nothing here\n", True, (None, None, "none")),
        ('{"status": "Optimal", "objective": 4}', "", True, ("Optimal", 4.0, "result_file")),
        (
            '{"status": "Optimal", "objective": 4, "proven_optimal": false}',
            "",
            True,
            ("Not Optimal", 4.0, "result_file"),
        ),
        (
            '{"status": "Optimal", "objective": 4, "model_status": "Time limit reached"}',
            "",
            True,
            ("Not Optimal", 4.0, "result_file"),
        ),
        ('{"status": "Optimal", "objective": "NaN"}', "", True, ("Optimal", None, "result_file")),
        ("garbage", "Status: Optimal\nOBJECTIVE_VALUE: 2\n", True, ("Optimal", 2.0, "stdout_status_line")),
    ],
)
def test_derive(result_text, stdout, exit_ok, expected):
    d = derive(result_text, stdout, exit_ok)
    assert (d["status"], d["objective"], d["status_source"]) == expected


COPT_LOG_TAIL = "MIP status      : stopped\nSolution status : integer optimal (relative gap limit 0.0001)\n"


@pytest.mark.parametrize(
    ("result_text", "stdout", "solver", "expected", "named"),
    [
        # a solver's own log line is not the program's status: COPT prints "Solution status : ..."
        (None, COPT_LOG_TAIL, "copt", (None, None, "none"), False),
        (None, COPT_LOG_TAIL + "OBJECTIVE_VALUE: 5.0\n", "copt", ("Optimal", 5.0, "objective_line_only"), False),
        # a status given as the solver's numeric code is named by that solver's table
        ('{"status": 2, "objective": 7}', "", "gurobi", ("OPTIMAL", 7.0, "result_file"), True),
        ('{"status": 3, "objective": null}', "", "gurobi", ("INFEASIBLE", None, "result_file"), True),
        (
            None,
            "Status: gurobi status 9\nOBJECTIVE_VALUE: 4\n",
            "gurobi",
            ("TIME_LIMIT", 4.0, "stdout_status_line"),
            True,
        ),
        (None, "Status: copt status 4\n", "copt", ("INF_OR_UNB", None, "stdout_status_line"), True),
        (None, "Status: 1\nOBJECTIVE_VALUE: 4\n", "cbc", ("Optimal", 4.0, "stdout_status_line"), True),
        (None, "Status: 13\n", "highs", ("Time limit reached", None, "stdout_status_line"), True),
        # no single known solver: a code stays a code
        (None, "Status: 2\nOBJECTIVE_VALUE: 4\n", "unknown", ("2", 4.0, "stdout_status_line"), False),
        (None, "Status: 2\nOBJECTIVE_VALUE: 4\n", "cbc+highs", ("2", 4.0, "stdout_status_line"), False),
    ],
)
def test_derive_with_the_solvers_own_words(result_text, stdout, solver, expected, named):
    d = derive(result_text, stdout, True, solver)
    assert (d["status"], d["objective"], d["status_source"]) == expected
    assert ("status code" in d["note"]) == named


@pytest.mark.parametrize(
    ("log", "stopped"),
    [
        ("Time limit reached\nBest objective 1.25e+01, best bound 0.0e+00, gap 100.0000%\n", True),  # Gurobi
        ("Solution limit reached\n", True),  # Gurobi
        ("MIP status      : stopped (time limit reached)\nSolution status : integer feasible\n", True),  # COPT
        # COPT says "stopped" of a model solved in presolve too: not a limit
        ("MIP status      : stopped\nSolution status : integer optimal (relative gap limit 0.0001)\n", False),
        ("Optimal solution found (tolerance 1.00e-04)\n", False),  # Gurobi
    ],
)
def test_a_legacy_program_that_prints_only_its_objective_and_a_solver_log(log, stopped):
    d = derive(None, log + "OBJECTIVE_VALUE: 12.5\n", True)
    assert (d["status"], d["objective"]) == ("Not Optimal" if stopped else "Optimal", 12.5)


@pytest.mark.parametrize("module", [result, capture])
def test_the_files_copied_into_a_program_import_only_the_standard_library(module):
    """`execute.helper_library` copies result.py and capture.py (as sitecustomize.py) next to a
    program, where there is no tcsexam: their module-level imports are the standard library's
    (a helper imports the program's own solver package inside, when it is called)."""
    body = ast.parse(Path(module.__file__).read_text()).body
    imported = {a.name.split(".")[0] for n in body if isinstance(n, ast.Import) for a in n.names}
    imported |= {n.module.split(".")[0] for n in body if isinstance(n, ast.ImportFrom) and n.module}
    assert imported - {"__future__"} <= set(sys.stdlib_module_names), imported
