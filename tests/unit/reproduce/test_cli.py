"""`tcsexam manifest` and `tcsexam compare` on bad input and on runs that measured different things
(the real runs are in tests/integration/test_compare.py)."""

from __future__ import annotations

import json

from tcsexam.cli import main

HEADER = "model,track,item,attempt,score,adoption_status,score_status,score_type,solver_protocol\n"


def _run(path, suite="lite", protocol="offline", reference="ref-a", models=("m",)):
    path.mkdir(parents=True)
    (path / "attempts.csv").write_text(HEADER)
    index = {
        "schema_version": 1,
        "suite": suite,
        "solver_protocol": protocol,
        "solver_reference_id": reference,
        "status": "incomplete",
        "models": {m: {"status": "incomplete", "index": None, "track_means": {}, "task_means": {}} for m in models},
    }
    (path / "index.json").write_text(json.dumps(index))
    return path


def test_manifest_of_a_missing_or_unfinished_run_is_one_line(tmp_path, capsys):
    assert main(["manifest", str(tmp_path / "nope")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "run directory not found" in err
    (tmp_path / "run").mkdir()
    assert main(["manifest", str(tmp_path / "run")]) == 1
    assert "no cohort.json" in capsys.readouterr().err
    assert not (tmp_path / "run" / "manifest.json").exists()


def test_compare_refuses_a_directory_without_index(tmp_path, capsys):
    _run(tmp_path / "a")
    (tmp_path / "b").mkdir()
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "b"), "--output", str(tmp_path / "c.json")]) == 1
    assert "no index.json" in capsys.readouterr().err
    assert not (tmp_path / "c.json").exists()
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "a"), "--output", "x", "--resamples", "0"]) == 2


def test_other_suite_protocol_reference_or_models_are_incomparable(tmp_path):
    base = _run(tmp_path / "base")
    cases = {
        "suite": _run(tmp_path / "s", suite="full"),
        "solver_protocol": _run(tmp_path / "p", protocol="online"),
        "reference": _run(tmp_path / "r", reference="ref-b"),
        "models_in_common": _run(tmp_path / "m", models=("other",)),
    }
    for name, run in cases.items():
        out = tmp_path / f"{name}.json"
        assert main(["compare", str(base), str(run), "--output", str(out), "--resamples", "10"]) == 4
        result = json.loads(out.read_text())
        assert result["verdict"] == "incomparable" and name in result["inputs"]["differ"]
        assert result["reasons"]
        assert main(["compare", str(base), str(run), "--output", str(out), "--exit-zero"]) == 0


def test_manifest_names_no_source_for_a_missing_solver_result(tmp_path, capsys):
    """A records.json an earlier run left for an attempt whose judged input is gone now (its row
    `missing`) is not reported as a Solver result with a source."""
    from pathlib import Path

    from tcsexam.attempts.online import ingest_online
    from tcsexam.tasks import load_task

    root = Path(__file__).resolve().parents[3]
    run = tmp_path / "run"
    run.mkdir()
    cohort = {
        "suite": "lite",
        "solver_protocol": "online",
        "solver_reference_id": "tcsexam-test-k3-v2",
        "models": {"m": {"attempts_per_task": 1}},
    }
    (run / "cohort.json").write_text(json.dumps(cohort))
    judged = tmp_path / "judged.json"
    judged.write_text(
        json.dumps([{"instance": "G11", "status": "ok", "A": 556}, {"instance": "G14", "status": "timeout"}])
    )
    task = load_task(root / "config/test/tasks/maxcut-mqlib.yaml")
    for attempt in ("1", "2"):
        ingest_online(judged, task, "m", attempt, run / "solver" / "m" / "maxcut-mqlib" / attempt / "records.json")
    (run / "attempts.csv").write_text(
        HEADER
        + "m,solver,maxcut-mqlib,1,0.25,selected,valid,fixed_reference_relative,online\n"
        + "m,solver,maxcut-mqlib,2,,excluded,missing,fixed_reference_relative,online\n"
    )
    args = [
        "manifest",
        str(run),
        "--output",
        str(run / "manifest.json"),
        "--reference",
        str(root / "config/test/reference.json"),
    ]
    assert main(args) == 0, capsys.readouterr().err
    candidates = json.loads((run / "manifest.json").read_text())["candidates"]["m"]["maxcut-mqlib"]
    assert list(candidates) == ["1"] and candidates["1"]["source"]["origin"] == "online_input"
