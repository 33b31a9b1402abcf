"""Failure attribution on constructed faulty submissions of each kind, executed for real in the
sandbox (so the files they open and the models they solve are captured), then scored."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from tcsexam.orspace.attribution import (
    Attribution,
    attribute,
    attribute_rows,
    data_facts,
    grounding_evidence,
    source_facts,
)
from tcsexam.orspace.execute import DEFAULT_LIMITS, ExecuteSettings, execute
from tcsexam.orspace.objectives import load_predictions, score_objectives
from tcsexam.orspace.release import load_release

ORACLE_HEADER = "workspace_id,task_type,instance_number,instance_id,reference_objective,relative_tolerance\n"
PARAMS = "Parameter_Name,Value,Unit,Context_Description\nhours_available,40,hours,machine hours\n"
TABLE = "Product,Profit,Hours,Max_Demand\nP,3,1,30\nQ,5,2,10\n"
#: the right model: max 3p + 5q, p + 2q <= 40, p <= 30, q <= 10 -> p = 30, q = 5, profit 115
REFERENCE = 115.0

READ = """
import csv
import pulp
from tcsexam.orspace.result import pulp_result, write_result

params = {r["Parameter_Name"]: float(r["Value"]) for r in csv.DictReader(open("../data/general_parameters.csv"))}
rows = list(csv.DictReader(open("../data/table_1.csv")))
"""
MODEL = """
prob = pulp.LpProblem("mix", pulp.LpMaximize)
x = {r["Product"]: pulp.LpVariable(r["Product"], lowBound=0) for r in rows}
prob += pulp.lpSum(float(r["Profit"]) * x[r["Product"]] for r in rows)
prob += pulp.lpSum(float(r["Hours"]) * x[r["Product"]] for r in rows) <= hours, "hours"
"""
DEMAND = """
for r in rows:
    prob += x[r["Product"]] <= float(r["Max_Demand"]), "demand_" + r["Product"]
"""
SOLVE = """
prob.solve(pulp.HiGHS(msg=False))
write_result(pulp_result(prob))
"""
SUBMISSIONS = {
    # 1: correct
    1: READ + "hours = params['hours_available']\n" + MODEL + DEMAND + SOLVE,
    # 2: execution: crashes before solving
    2: READ + "raise RuntimeError('bug')\n",
    # 3: grounding: reads nothing, its own copy of the numbers (one of them wrong)
    3: """
import pulp
from tcsexam.orspace.result import pulp_result, write_result
prob = pulp.LpProblem("mix", pulp.LpMaximize)
p, q = pulp.LpVariable("p", lowBound=0), pulp.LpVariable("q", lowBound=0)
prob += 3 * p + 5 * q
prob += p + 2 * q <= 48
prob += p <= 30
prob += q <= 10
prob.solve(pulp.HiGHS(msg=False))
write_result(pulp_result(prob))
""",
    # 4: grounding: reads the files but changes a parameter's value
    4: READ + "hours_available = 45\nhours = hours_available\n" + MODEL + DEMAND + SOLVE,
    # 5: modelling: forgets the demand limits (its optimum beats the reference)
    5: READ + "hours = params['hours_available']\n" + MODEL + SOLVE,
    # 6: invented constraint: at least as much Q as P (not asked for)
    6: READ + "hours = params['hours_available']\n" + MODEL + DEMAND + "prob += x['Q'] >= x['P'], 'balance'\n" + SOLVE,
    # 7: unknown: reads the data, prints a wrong number, no solver model to check
    7: READ + "print('OBJECTIVE_VALUE: 100')\nprint('Status: Optimal')\n",
}
EXPECTED = {
    1: None,
    2: Attribution.EXECUTION,
    3: Attribution.GROUNDING,
    4: Attribution.GROUNDING,
    5: Attribution.MODELLING,
    6: Attribution.INVENTED_CONSTRAINT,
    7: Attribution.UNKNOWN,
}


def _release(root: Path) -> None:
    oracle = root / "evaluation" / "build_evaluation"
    oracle.mkdir(parents=True)
    lines = "".join(f"or_space_{n:03d}_build,build,{n},T{n},{REFERENCE},0.01\n" for n in SUBMISSIONS)
    (oracle / "reference_objectives.csv").write_text(ORACLE_HEADER + lines)
    for n, program in SUBMISSIONS.items():
        ws = root / "Workspace_OR" / "build_workspaces" / f"instance_{n}"
        (ws / "data").mkdir(parents=True)
        (ws / "src").mkdir()
        (ws / "data" / "general_parameters.csv").write_text(PARAMS)
        (ws / "data" / "table_1.csv").write_text(TABLE)
        (ws / "src" / "solve.py").write_text(program)


@pytest.fixture(scope="module")
def scored(tmp_path_factory):
    root = tmp_path_factory.mktemp("attr") / "release"
    _release(root)
    out = root.parent / "out"
    execute(root, out, ExecuteSettings(limits=replace(DEFAULT_LIMITS, wall_s=60.0)))
    release = load_release(root, ("build",))
    summary = score_objectives(release, load_predictions(out / "predictions.jsonl", set(release.oracle)), ("build",))
    attribute_rows(summary, root, out / "records")
    return root, out, {int(r["workspace_id"][9:12]): r for r in summary["rows"]}, summary


def test_each_constructed_fault_gets_its_attribution(scored):
    _, _, rows, summary = scored
    assert {n: r["attribution"] for n, r in rows.items()} == EXPECTED
    assert summary["attributions"] == {
        "execution": 1,
        "grounding": 2,
        "modelling": 1,
        "invented_constraint": 1,
        "unknown": 1,
    }
    assert all(type(r["attribution"]) is Attribution for r in rows.values() if r["attribution"] is not None)


def test_the_evidence_is_on_the_row(scored):
    _, out, rows, _ = scored
    correct = json.loads((out / "records" / "or_space_001_build.json").read_text())
    assert correct["files_read"][:1] == ["src/solve.py"] and "data/table_1.csv" in correct["files_read"]
    assert "hours" in correct["model_lp"]
    hardcoded = rows[3]["attribution_evidence"]["grounding"]
    assert hardcoded["read_known_by"] == "opened in the sandbox"
    assert hardcoded["unread"] == ["data/general_parameters.csv", "data/table_1.csv"]
    assert {h["value"] for h in hardcoded["hardcoded_data_values"]} >= {3.0, 5.0, 30.0, 10.0}
    changed = rows[4]["attribution_evidence"]["grounding"]["changed_values"]
    assert [(c["name"], c["source_value"], c["data_value"]) for c in changed] == [("hours_available", 45.0, 40.0)]
    removal = rows[6]["attribution_evidence"]["constraint_removal"]
    assert [r["constraint"] for r in removal["removed"]] == ["balance"]
    assert removal["removed"][0]["objective"] == pytest.approx(REFERENCE)
    assert rows[5]["attribution_evidence"]["constraint_removal"]["removed"] == []
    assert rows[2]["attribution_evidence"]["message"].startswith("exit code")


def test_static_evidence_without_a_record(scored):
    """Without the execution record (no opened files, no model) the source decides grounding and
    a wrong objective stays unknown."""
    root, _, rows, _ = scored
    ws = root / "Workspace_OR" / "build_workspaces"
    row3 = {**rows[3], "failure_mode": "wrong_objective"}
    assert attribute(row3, ws / "instance_3", None, None)[0] == Attribution.GROUNDING
    verdict, evidence = attribute(rows[6], ws / "instance_6", None, None)
    assert verdict == Attribution.UNKNOWN and evidence["grounding"]["read_known_by"] == "named in the source"
    assert evidence["grounding"]["unread"] == []


def test_an_objective_of_another_evidenced_reading_is_modelling(scored):
    root, _, rows, _ = scored
    ws = root / "Workspace_OR" / "build_workspaces"
    answers = [(REFERENCE, "reference"), (rows[6]["objective"], "references/orspace-models/x/other_reading.py")]
    verdict, evidence = attribute(rows[6], ws / "instance_6", None, answers)
    assert verdict == Attribution.MODELLING and evidence["matches_reading"].endswith("other_reading.py")


def test_listing_the_data_folder_counts_as_reading_it(tmp_path):
    (tmp_path / "data").mkdir()
    (tmp_path / "src").mkdir()
    (tmp_path / "data" / "table_1.csv").write_text(TABLE)
    (tmp_path / "data" / "table_2.csv").write_text("A,B\n")  # a header alone: nothing to read
    (tmp_path / "src" / "m.py").write_text("import glob\nfiles = glob.glob('../data/*.csv')\n")
    ground = grounding_evidence(data_facts(tmp_path), source_facts(tmp_path / "src"), None)
    assert ground["data_files"] == ["data/table_1.csv"] and ground["unread"] == []
    assert ground["read_known_by"] == "lists the data folder (source)"
