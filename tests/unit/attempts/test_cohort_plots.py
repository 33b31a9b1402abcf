"""cohort.json (tcsexam attempts cohort) and the report plots."""

from __future__ import annotations

import json

import pytest

from tcsexam.attempts.cohort import build_cohort, parse_model_plans
from tcsexam.attempts.plots import PLOTS, make_plots
from tcsexam.attempts.rows import AttemptRow, failed_row, table_text
from tcsexam.errors import InputError, UsageError


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


def test_plots_are_written(tmp_path, capsys):
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
    # the command (rule attempts_plots): one log line per plot, with time stamp and level
    from tcsexam.cli import main

    capsys.readouterr()
    argv = [
        "attempts",
        "plots",
        "--index",
        str(tmp_path / "index.json"),
        "--attempts",
        str(tmp_path / "attempts.csv"),
        "--solver-dir",
        str(tmp_path / "solver"),
        "--output-dir",
        str(tmp_path / "p3"),
    ]
    assert main(argv) == 0
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == len(PLOTS) and all(" INFO    tcsexam attempts plots: " in line for line in lines), lines
    (tmp_path / "bad.json").write_text("[]")
    with pytest.raises(InputError, match="not an index.json"):
        make_plots(tmp_path / "bad.json", tmp_path / "attempts.csv", tmp_path / "solver", tmp_path / "p2")
