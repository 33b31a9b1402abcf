"""The rows of a run with failed jobs (tcsexam.workflow.salvage): what the run produced is kept,
every other planned attempt is judge_failed with its failed job's reason (the failure note
`tcsexam job-failed` left beside its log), and notes of an earlier run are not taken as this
run's. The whole path (the workflow's onerror, the table, the Index) runs in
tests/integration/test_failed_jobs.py."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tcsexam.attempts.rows import failed_row, write_row
from tcsexam.cli import main
from tcsexam.layout import ResultsLayout
from tcsexam.records.digest import hash_file
from tcsexam.workflow import Plan
from tcsexam.workflow.salvage import WRITTEN, _reason, failures, salvage_rows, salvaged


def _plan(tmp_path, project_root):
    (tmp_path / "solvers/a/sat-satlib/1").mkdir(parents=True)
    (tmp_path / "solvers/a/sat-satlib/1/solver.yaml").write_text("command: [x]\n")
    (tmp_path / "solvers/a/maxcut-mqlib/1").mkdir(parents=True)
    (tmp_path / "solvers/a/maxcut-mqlib/1/solver.yaml").write_text("command: [x]\n")
    cfg = {
        "suite": "lite",
        "protocol": "offline",
        "results_dir": str(tmp_path / "res"),
        "solvers_dir": str(tmp_path / "solvers"),
        "verdicts_dir": str(tmp_path / "verdicts"),
        "models": [{"name": "a", "attempts": ["1"]}],
        "run": {"instances": {}, "task_files": {}},
    }
    return Plan(cfg, project_root)


def _fail(log, text: str, code: int = 1) -> None:
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text(f"2026-12-06T10:00:00Z ERROR   {text}\n")
    assert main(["job-failed", str(log), str(code)]) == code


def test_rows_kept_and_the_failed_ones_judge_failed_with_their_reason(tmp_path, project_root):
    plan = _plan(tmp_path, project_root)
    layout = plan.layout
    # sat-satlib's row exists; maxcut-mqlib's job failed; every missing-row file exists
    write_row(
        layout.solver_row("a", "sat-satlib", "1"),
        failed_row("a", "solver", "sat-satlib", "1", "missing", "x", "offline"),
    )
    for p in plan.planned:
        if "/missing/" in p.row:
            protocol = "offline" if p.track == "solver" else ""
            write_row(p.row, failed_row(p.model, p.track, p.item, p.attempt, "missing", "no submission", protocol))
    since = os.stat(tmp_path).st_mtime - 1
    _fail(layout.attempt_dir("a", "maxcut-mqlib", "1") / "run.log", "tcsexam run: error: the sandbox broke")
    _fail(layout.root / "logs" / "cohort.log", "tcsexam attempts cohort: error: bad reference")

    failed = failures(layout.root, since)
    assert sorted(f.reason for f in failed) == [
        "tcsexam attempts cohort: error: bad reference",
        "tcsexam run: error: the sandbox broke",
    ]
    files, rows = salvage_rows(plan, failed)
    assert str(layout.solver_row("a", "sat-satlib", "1")) in files
    by_item = {r.item: r for r in rows}
    maxcut = by_item.pop("maxcut-mqlib")
    assert maxcut.score_status == "judge_failed" and maxcut.solver_protocol == "offline"
    assert maxcut.note.startswith("tcsexam run: error: the sandbox broke (log: ")
    # the model's verdict-track rows file was never made: its attempts name the run's failures
    assert by_item and all(r.track != "solver" for r in by_item.values())
    assert all(r.score_status == "judge_failed" and "a job it depends on failed" in r.note for r in by_item.values())
    assert all("the sandbox broke" in r.note for r in by_item.values())


def test_an_earlier_runs_failure_is_not_this_runs(tmp_path, project_root):
    plan = _plan(tmp_path, project_root)
    log = plan.layout.attempt_dir("a", "maxcut-mqlib", "1") / "run.log"
    _fail(log, "tcsexam run: error: old")
    note = log.with_name("run.log.failed")
    os.utime(note, (1_000_000, 1_000_000))
    assert failures(plan.layout.root, since=2_000_000) == []
    _, rows = salvage_rows(plan, [])
    assert all("did not run" in r.note for r in rows)
    assert json.loads(note.read_text())["reason"] == "tcsexam run: error: old"


def test_a_relative_results_folder_still_finds_its_own_failure(tmp_path, monkeypatch):
    """The plan's rows are relative to the workflow's folder, the notes found from the layout: the
    failure in the row's own folder is its reason either way."""
    monkeypatch.chdir(tmp_path)
    log = tmp_path / "res" / "proof" / "m" / "i" / "1" / "check.log"
    _fail(log, "tcsexam proof: error: coqc is not installed")
    failed = failures(tmp_path / "res", since=0)
    row = Path("res/proof/m/i/1/row.json")
    assert _reason(row, failed, Path("res")).startswith("tcsexam proof: error: coqc is not installed")


def test_a_row_left_by_an_earlier_run_is_stale_when_its_job_failed_now(tmp_path, project_root):
    """The failed job's own output is gone, but the row an earlier run computed from it is still
    there: it is judge_failed with the failure's reason, never kept as this run's result."""
    plan = _plan(tmp_path, project_root)
    layout = plan.layout
    row = layout.solver_row("a", "maxcut-mqlib", "1")
    write_row(row, failed_row("a", "solver", "maxcut-mqlib", "1", "missing", "x", "offline"))
    _fail(layout.attempt_dir("a", "maxcut-mqlib", "1") / "run.log", "tcsexam run: error: task changed and broke")
    files, rows = salvage_rows(plan, failures(layout.root, since=0))
    assert str(row) not in files
    maxcut = next(r for r in rows if r.item == "maxcut-mqlib")
    assert maxcut.note.startswith("tcsexam run: error: task changed and broke")


def test_the_salvaged_table_and_index_are_known_as_such_until_changed(tmp_path):
    """heal rebuilds what the last salvage wrote, saying so (not as a damaged file)."""
    layout = ResultsLayout(tmp_path / "tree")
    (layout.root / ".salvage").mkdir(parents=True)
    layout.attempts_csv.write_text("model,track\n")
    layout.index.write_text("{}")
    written = {str(p): hash_file(p) for p in (layout.attempts_csv, layout.index)}
    (layout.root / ".salvage" / WRITTEN).write_text(json.dumps(written))
    assert salvaged(layout, layout.attempts_csv) and salvaged(layout, layout.index)
    layout.index.write_text('{"status": "complete"}')  # made by a later run's score job
    assert not salvaged(layout, layout.index)
    assert not salvaged(ResultsLayout(tmp_path / "other"), layout.attempts_csv)
