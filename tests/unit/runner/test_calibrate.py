"""Machine calibration: the benchmark itself, the job's calibration.json and the manifest's
section (no timing assertions)."""

from __future__ import annotations

import json

from tcsexam.runner.observers import calibrate


def test_benchmark_is_deterministic_and_reports_both_parts():
    a, b = calibrate.calibrate(), calibrate.calibrate()
    assert a["checksums"] == b["checksums"]  # the same work every time
    for key in ("python_s", "numpy_s", "python_speed", "numpy_speed", "speed"):
        assert a[key] > 0
    assert a["version"] == calibrate.VERSION


def test_job_calibration_is_written_beside_the_records_and_reused(tmp_path):
    out = tmp_path / "job" / "records.json"
    out.parent.mkdir()
    said = []
    first = calibrate.job_calibration(out, rerun=True, say=said.append, label="t")
    calibrate.write_job_calibration(out, first)
    assert json.loads((out.parent / "calibration.json").read_text()) == first and "machine calibration" in said[0]
    stored = dict(first, speed=123.0)
    (out.parent / "calibration.json").write_text(json.dumps(stored))
    assert calibrate.job_calibration(out, rerun=False) == stored  # every record reused: kept
    assert calibrate.job_calibration(out, rerun=True)["speed"] != 123.0  # candidates ran: measured again


def test_a_job_records_the_runs_measurement_of_its_machine_where_there_is_one(tmp_path, monkeypatch):
    # the fork server's child measures the machine once (`measure_for_run`); a job finding that
    # file records it, a job finding none, or one of another benchmark version, measures itself
    monkeypatch.setattr(calibrate, "RUN_MEASUREMENTS", 2)
    shared = tmp_path / "server" / "calibration.json"
    shared.parent.mkdir()
    calibrate.measure_for_run(shared)
    run = json.loads(shared.read_text())
    assert run["scope"] == "run" and run["measurements"] == 2 and run["version"] == calibrate.VERSION
    out = tmp_path / "job" / "records.json"
    monkeypatch.setattr(calibrate, "run_file", shared)
    said = []
    assert calibrate.job_calibration(out, rerun=True, say=said.append, label="t") == run
    assert "machine calibration (the run's on this machine)" in said[0]
    shared.write_text(json.dumps({**run, "version": calibrate.VERSION + 1}))
    own = calibrate.job_calibration(out, rerun=True, say=said.append, label="t")
    assert own["scope"] == "job" and own["repeats"] == calibrate.REPEATS and "(measured now)" in said[1]
    shared.write_text("{torn")
    assert calibrate.job_calibration(out, rerun=True)["scope"] == "job"
    monkeypatch.setattr(calibrate, "run_file", tmp_path / "none.json")
    assert calibrate.job_calibration(out, rerun=True)["scope"] == "job"


def _cal(speed):
    return {
        "version": calibrate.VERSION,
        "python_s": 0.04,
        "numpy_s": 0.04,
        "python_speed": speed,
        "numpy_speed": speed,
        "speed": speed,
    }


def test_manifest_section_collects_every_job(tmp_path):
    for attempt, speed in (("1", 1.0), ("2", 3.0), ("3", 2.0)):
        d = tmp_path / "solver" / "m" / "t" / attempt
        d.mkdir(parents=True)
        (d / "calibration.json").write_text(json.dumps(_cal(speed)))
    section = calibrate.collect(tmp_path)
    assert section["summary"]["jobs"] == 3 and section["summary"]["speed"] == 2.0
    assert set(section["jobs"]["m"]["t"]) == {"1", "2", "3"}
    assert calibrate.collect(tmp_path / "none") == {"summary": None, "jobs": {}}


def test_every_solver_job_writes_its_calibration(tmp_path):
    from tcsexam.runner.engine.batch import PoolOptions, RunOptions
    from tcsexam.runner.solver.orchestrate import RunHooks, TaskJob, run_job

    (tmp_path / "g.txt").write_text("3 2\n1 2 1\n2 3 1\n")
    (tmp_path / "task.yaml").write_text(
        "id: tiny\nproblem: maxcut\nkind: objective\ndirection: maximize\n"
        f"limits: {{wall_s: 5, mem_mb: 256, output_mb: 1, nproc: 32}}\ninstance_dir: {tmp_path}\n"
        "instances:\n  - {name: g, file: g.txt}\n"
    )
    cand = tmp_path / "c"
    cand.mkdir()
    (cand / "solver.yaml").write_text("command: [python3, -c, \"open('{solution}', 'w').write('0 1 0')\"]\n")
    out = tmp_path / "job" / "records.json"
    said = []
    summary = run_job(
        TaskJob(task=tmp_path / "task.yaml", candidate_dir=cand, output=out),
        RunOptions(sandbox="local", progress=False, pool=PoolOptions(use_ray=False)),
        RunHooks(log=said.append),
    )
    assert summary.calibration == json.loads((out.parent / "calibration.json").read_text())
    # the job's summary line names the machine's speed beside its statuses
    assert f"ok=1; machine speed {summary.calibration['speed']:g}; records -> " in summary.line() in said
    (record,) = json.loads(out.read_text())
    assert record["status"] == "ok" and "trace" not in record  # not an anytime task: no trace key
