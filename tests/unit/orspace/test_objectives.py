"""score-objectives against the real release and the bundled demo oracle."""

from __future__ import annotations

import csv
import json
import subprocess
import sys

import pytest

from tcsexam.errors import InputError
from tcsexam.orspace.objectives import load_predictions, score_objectives, status_failure_mode
from tcsexam.orspace.release import load_release, load_rubrics


def oracle_rows(release):
    for mode in ("build", "revise"):
        with open(release / "evaluation" / f"{mode}_evaluation" / "reference_objectives.csv") as fh:
            yield from csv.DictReader(fh)


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_every_oracle_row_and_rubric_loads(release):
    rel = load_release(release)
    assert len(rel.oracle) == 180
    assert sum(o.task_type == "build" for o in rel.oracle.values()) == 90
    rubrics = load_rubrics(release / "evaluation" / "explain_evaluation" / "rubrics.jsonl")
    assert len(rubrics) == 90
    assert all(rel.difficulty.get(w) in {"Easy", "Medium", "Hard"} for w in rel.oracle)
    for wid in rel.oracle:
        assert rel.workspace_dir(wid) is not None, wid


def test_oracle_predictions_pass_and_2_percent_fails(release, tmp_path):
    rows = list(oracle_rows(release))
    rel = load_release(release)
    exact = [
        {"workspace_id": r["workspace_id"], "status": "Optimal", "objective": float(r["reference_objective"])}
        for r in rows
    ]
    summary = score_objectives(rel, load_predictions(write_jsonl(tmp_path / "p.jsonl", exact), set(rel.oracle)))
    assert summary["pass_at_1"] == 1.0 and summary["n"] == 180
    assert summary["by_mode"]["build"]["n"] == 90 and summary["by_mode"]["revise"]["n"] == 90
    assert set(summary["by_revise_type"]) == {"R1", "R2", "R3", "R4", "R5"}
    assert sum(v["n"] for v in summary["by_difficulty"].values()) == 180
    for sign in (1, -1):
        moved = [dict(p, objective=p["objective"] + sign * 0.02 * max(1.0, abs(p["objective"]))) for p in exact]
        s = score_objectives(rel, load_predictions(write_jsonl(tmp_path / "m.jsonl", moved), set(rel.oracle)))
        assert s["passed"] == 0 and s["failure_modes"]["wrong_objective"] == 180
    inside = [dict(p, objective=p["objective"] + 0.009 * max(1.0, abs(p["objective"]))) for p in exact]
    s = score_objectives(rel, load_predictions(write_jsonl(tmp_path / "i.jsonl", inside), set(rel.oracle)))
    assert s["pass_at_1"] == 1.0


def test_rule_details(demo, tmp_path):
    rel = load_release(demo["release"])
    preds = [
        {"workspace_id": "or_space_101_build", "status": "optimal", "objective": "2862.5"},  # case, string number
        {"workspace_id": "or_space_102_build", "status": "Optimal", "objective": None},
        {"workspace_id": "or_space_103_build", "status": "Infeasible", "objective": None},
        {"workspace_id": "or_space_104_build", "status": "Not Optimal", "objective": 8140.0},
        {"workspace_id": "or_space_103_revise", "status": "Optimal", "objective": 0.995},  # |ref| < 1: absolute 0.01
        {"workspace_id": "or_space_102_revise", "status": "Optimal", "objective": 9986.0, "failure_mode": None},
    ]
    s = score_objectives(rel, load_predictions(write_jsonl(tmp_path / "p.jsonl", preds), set(rel.oracle)))
    rows = {r["workspace_id"]: r for r in s["rows"]}
    assert rows["or_space_101_build"]["passed"]
    assert rows["or_space_102_build"]["failure_mode"] == "missing_output"
    assert rows["or_space_103_build"]["failure_mode"] == "infeasible"
    assert rows["or_space_104_build"]["failure_mode"] == "not_optimal"
    assert rows["or_space_103_revise"]["passed"]
    assert rows["or_space_105_build"]["failure_mode"] == "missing_output"  # no prediction fails
    assert s["n"] == 11 and s["passed"] == 3


def test_unknown_and_duplicate_ids_are_errors(demo, tmp_path):
    rel = load_release(demo["release"])
    with pytest.raises(InputError, match="line 2: unknown workspace id or_space_999_build"):
        load_predictions(
            write_jsonl(
                tmp_path / "u.jsonl", [{"workspace_id": "or_space_101_build"}, {"workspace_id": "or_space_999_build"}]
            ),
            set(rel.oracle),
        )
    with pytest.raises(InputError, match="line 2: duplicate workspace id or_space_101_build"):
        load_predictions(
            write_jsonl(tmp_path / "d.jsonl", [{"workspace_id": "or_space_101_build"}] * 2), set(rel.oracle)
        )


def test_cli_error_is_one_line_and_leaves_no_output(demo, tmp_path):
    preds = write_jsonl(
        tmp_path / "p.jsonl", [{"workspace_id": "or_space_007_build", "status": "Optimal", "objective": 1}]
    )
    out = tmp_path / "o.json"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "tcsexam",
            "orspace",
            "score-objectives",
            "--release",
            str(demo["release"]),
            "--predictions",
            str(preds),
            "--output",
            str(out),
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 1
    assert proc.stderr.count("\n") == 1 and "or_space_007_build" in proc.stderr
    assert not out.exists()


def test_bad_oracle_rows(tmp_path):
    folder = tmp_path / "evaluation" / "build_evaluation"
    folder.mkdir(parents=True)
    header = "workspace_id,task_type,instance_number,instance_id,reference_objective,relative_tolerance\n"
    (folder / "reference_objectives.csv").write_text(header + "or_space_001_build,build,1,X,nan,0.01\n")
    with pytest.raises(InputError, match="line 2: or_space_001_build: reference_objective 'nan' is not finite"):
        load_release(tmp_path, ("build",))
    (folder / "reference_objectives.csv").write_text(header + "or_space_001_revise,build,1,X,1,0.01\n")
    with pytest.raises(InputError, match="task_type"):
        load_release(tmp_path, ("build",))


def test_status_failure_modes():
    assert status_failure_mode("Infeasible") == "infeasible"
    assert status_failure_mode("Unbounded") == "unbounded"
    assert status_failure_mode("Time limit reached") == "timeout"
    assert status_failure_mode("Not Solved") == "not_optimal"
