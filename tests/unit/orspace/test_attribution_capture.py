"""gurobipy and coptpy models captured while the program runs (`capture.py`: Model.write /
Model.writeLp to model.lp just before Model.optimize / Model.solve) and attributed from the LP
file: the demo submissions of tests/unit/orspace/solver_demos, each with an invented constraint and
as its LP relaxation, executed for real with this interpreter."""

from __future__ import annotations

import importlib.util
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from tcsexam.orspace.attribution import Attribution, attribute_rows
from tcsexam.orspace.execute import DEFAULT_LIMITS, ExecuteSettings, execute
from tcsexam.orspace.objectives import load_predictions, score_objectives
from tcsexam.orspace.release import load_release

DEMOS = Path(__file__).parent / "solver_demos"
#: solver package -> the demo instance that uses it, its constraint call
SOLVERS = {"gurobipy": (201, "gp"), "coptpy": (202, "cp")}
#: not asked for: at least one table (optimum 19 instead of the reference 20)
INVENTED = 'm.addConstr(x["table"] >= 1, name="one_table")\n'


def release_of(tmp_path: Path, package: str) -> Path:
    n, _ = SOLVERS[package]
    root = tmp_path / "subs"
    builds = root / "Workspace_OR" / "build_workspaces"
    source = DEMOS / "Workspace_OR" / "build_workspaces" / f"instance_{n}"
    lines = ["workspace_id,task_type,instance_number,instance_id,reference_objective,relative_tolerance"]
    for k, change in enumerate(("none", "invented", "relaxed"), start=1):
        ws = builds / f"instance_{k}"
        shutil.copytree(source, ws)
        main = ws / "src" / "main.py"
        text = main.read_text()
        if change == "invented":
            solve = "m.optimize()" if package == "gurobipy" else "m.solve()"
            assert solve in text
            text = text.replace(solve, INVENTED + solve)
        elif change == "relaxed":
            text = text.replace("INTEGER = True", "INTEGER = False")
        main.write_text(text)
        lines.append(f"or_space_{k:03d}_build,build,{k},Workshop_{k},20.0,0.01")
    oracle = root / "evaluation" / "build_evaluation"
    oracle.mkdir(parents=True)
    (oracle / "reference_objectives.csv").write_text("\n".join(lines) + "\n")
    return root


@pytest.mark.parametrize("package", sorted(SOLVERS))
def test_a_solver_api_model_is_captured_and_attributed(tmp_path, package):
    if importlib.util.find_spec(package) is None:
        pytest.skip(f"{package} is not installed here (pip install '.[orspace]')")
    root = release_of(tmp_path, package)
    out = tmp_path / "out"
    execute(root, out, ExecuteSettings(limits=replace(DEFAULT_LIMITS, wall_s=120.0)), modes=("build",))
    release = load_release(root, ("build",))
    summary = score_objectives(release, load_predictions(out / "predictions.jsonl", set(release.oracle)), ("build",))
    attribute_rows(summary, root, out / "records")
    rows = {int(r["workspace_id"][9:12]): r for r in summary["rows"]}
    assert rows[1]["passed"], rows[1]
    invented, relaxed = rows[2], rows[3]
    assert invented["objective"] == pytest.approx(19.0) and relaxed["objective"] == pytest.approx(21.0)
    assert invented["attribution"] == Attribution.INVENTED_CONSTRAINT, invented["attribution_evidence"]
    removal = invented["attribution_evidence"]["constraint_removal"]
    assert [r["constraint"] for r in removal["removed"]] == ["one_table"]
    assert removal["removed"][0]["objective"] == pytest.approx(20.0)
    # the LP relaxation: no single constraint nor bound explains it, so the model is wrong
    assert relaxed["attribution"] == Attribution.MODELLING, relaxed["attribution_evidence"]
    assert relaxed["attribution_evidence"]["constraint_removal"]["removed"] == []
