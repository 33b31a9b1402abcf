"""An external checker's verdict is about the task's statement only when its statement_sha256 is
the sha256 of the task's statement file (docs/proofs.md, "External checkers")."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from tcsexam.attempts.verdicts import model_verdict_rows, task_statement, verdict_row, verdict_row_file
from tcsexam.cli import main
from tcsexam.errors import InputError

ROOT = Path(__file__).resolve().parents[3]
EVIDENCE = {"checker": "lean4", "checker_version": "4.9.0", "axioms": ["propext"]}


def V(item, **kw):
    base = {"model": "m", "track": "theorem", "item": item, "attempt": "1", "original_reward": 1.0, "complete": True}
    base.update(EVIDENCE)
    base.update(kw)
    return base


def write_task(folder: Path, item: str, text: str, track: str = "theorem") -> Path:
    """A proof task file of its own (not a bundled one) with statement text `text`."""
    (folder / "proofs").mkdir(parents=True, exist_ok=True)
    (folder / "proofs" / f"{item}.v").write_text(text)
    extra = "negation: negation\nrefutation: refutation\n" if track == "open_conjecture" else ""
    path = folder / f"{item}.yaml"
    path.write_text(
        f"id: {item}\ntrack: {track}\nchecker: coq\nstatement_file: proofs/{item}.v\nstatement: statement\n"
        f"theorem: proof\n{extra}coq: {{version: '8.16', libraries: [Coq], axioms: []}}\n"
        "limits: {wall_s: 20, mem_mb: 2048}\n"
    )
    return path


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def task(tmp_path):
    text = "Definition statement : Prop := forall n : nat, n + 0 = n.\n"
    return write_task(tmp_path / "tasks", "theorem-plus-zero", text)


def test_matching_digest_scores_the_proof(task, tmp_path):
    statement = task_statement("theorem-plus-zero", task)
    assert statement.sha256 == digest(task.parent / "proofs" / "theorem-plus-zero.v")
    row = verdict_row(V("theorem-plus-zero", statement_sha256=statement.sha256), "v.json", statement=statement)
    assert row.score == 1.0 and "mismatch" not in row.note


@pytest.mark.parametrize("complete", [True, False])
def test_mismatching_digest_scores_zero_and_names_both(task, tmp_path, complete):
    statement = task_statement("theorem-plus-zero", task)
    other = hashlib.sha256(b"Definition statement : Prop := True.\n").hexdigest()
    verdict = tmp_path / "verdicts" / "m" / "theorem-plus-zero" / "1.json"
    verdict.parent.mkdir(parents=True)
    verdict.write_text(json.dumps(V("theorem-plus-zero", statement_sha256=other, complete=complete)))
    row = verdict_row_file(verdict, task_file=task)
    assert (row.score, row.score_status) == (0.0, "valid")
    assert "statement digest mismatch" in row.note
    assert other in row.note and statement.sha256 in row.note and str(verdict) in row.note and str(task) in row.note
    if complete:
        assert "complete proof accepted" not in row.note and "another statement" in row.note
    # the same verdict without the check (or with the statement it names) scores as it says
    assert verdict_row_file(verdict, check_statement=False).score == (1.0 if complete else 0.0)


def test_open_conjecture_refutation_of_another_statement(tmp_path):
    text = "Definition statement : Prop := 1 = 1.\nDefinition negation : Prop := ~ statement.\n"
    task = write_task(tmp_path, "conjecture-one", text, track="open_conjecture")
    statement = task_statement("conjecture-one", task)
    data = V("conjecture-one", track="open_conjecture", status="complete", statement_sha256="b" * 64)
    row = verdict_row(data, "c.json", statement=statement)
    assert row.score == 0.0 and "statement digest mismatch" in row.note
    assert verdict_row(dict(data, statement_sha256=statement.sha256), "c.json", statement=statement).score == 1.0


def test_bundled_item_is_checked_by_default(tmp_path):
    """An item with a task file under config/tasks/ is checked without naming the file."""
    item = "theorem-gauss-sum"
    good = digest(ROOT / "config" / "tasks" / "proofs" / f"{item}.v")
    path = tmp_path / "1.json"
    path.write_text(json.dumps(V(item, statement_sha256=good)))
    assert verdict_row_file(path).score == 1.0
    path.write_text(json.dumps(V(item, statement_sha256="c" * 64)))
    row = verdict_row_file(path)
    assert row.score == 0.0 and good in row.note and "c" * 64 in row.note


def test_item_without_task_file_is_not_checked(tmp_path):
    assert task_statement("theorem-kraft-inequality") is None  # an external checker's item only
    path = tmp_path / "1.json"
    path.write_text(json.dumps(V("theorem-kraft-inequality", statement_sha256="d" * 64)))
    row = verdict_row_file(path)
    assert row.score == 1.0 and "mismatch" not in row.note and "no checker evidence" not in row.note


def test_construction_and_missing_digest(task):
    statement = task_statement("theorem-plus-zero", task)
    # no statement_sha256: nothing to compare, the evidence check flags it instead
    row = verdict_row(V("theorem-plus-zero"), "v.json", statement=statement)
    assert row.score == 1.0 and "no checker evidence" in row.note and "mismatch" not in row.note
    # construction verdicts carry no statement
    cons = {"model": "m", "track": "construction", "item": "construction-x", "attempt": "1", "original_reward": 0.5}
    assert verdict_row(cons, "c.json", statement=statement).score == 0.5


def test_bad_task_files(tmp_path, task):
    with pytest.raises(InputError, match="not found"):
        task_statement("theorem-plus-zero", tmp_path / "nope.yaml")
    with pytest.raises(InputError, match="not the item"):
        task_statement("theorem-other", task)


def test_verdict_rows_use_the_task_files_given(task, tmp_path):
    from tcsexam.suites import load_suite

    suite = load_suite("lite")
    item = suite.tracks["theorem"][0]
    own = write_task(tmp_path / "own", item, "Definition statement : Prop := 0 = 0.\n")
    bundled = task_statement(item)
    verdicts = tmp_path / "verdicts"
    (verdicts / "m" / item).mkdir(parents=True)
    (verdicts / "m" / item / "1.json").write_text(json.dumps(V(item, statement_sha256=bundled.sha256)))
    rows = {r.item: r for r in model_verdict_rows("m", suite, verdicts, ["1"])}
    assert rows[item].score == 1.0
    rows = {r.item: r for r in model_verdict_rows("m", suite, verdicts, ["1"], task_files={item: str(own)})}
    assert rows[item].score == 0.0 and str(own) in rows[item].note
    # through the CLI, and index.json's issue
    out = tmp_path / "rows.json"
    argv = ["attempts", "verdict-rows", "--model", "m", "--suite", "lite", "--verdicts-dir", str(verdicts)]
    argv += ["--attempts", "1", "--task-file", f"{item}={own}", "--output", str(out)]
    assert main(argv) == 0
    written = {r["item"]: r for r in json.loads(out.read_text())}
    assert written[item]["score"] == 0.0
    row_out = tmp_path / "row.json"
    argv = ["attempts", "verdict-row", "--verdict", str(verdicts / "m" / item / "1.json"), "--output", str(row_out)]
    assert main([*argv, "--task-file", str(own)]) == 0
    assert json.loads(row_out.read_text())["score"] == 0.0
    assert main(argv) == 0
    assert json.loads(row_out.read_text())["score"] == 1.0


def test_index_lists_statement_mismatches(task, tmp_path):
    import pandas as pd

    from tcsexam.scoring.proof_issues import statement_mismatches

    statement = task_statement("theorem-plus-zero", task)
    source = str(tmp_path / "verdicts (1)" / "m" / "theorem-plus-zero" / "1.json")
    bad = verdict_row(V("theorem-plus-zero", statement_sha256="e" * 64), source, statement=statement)
    good = verdict_row(V("theorem-plus-zero", statement_sha256=statement.sha256), source, statement=statement)
    rows = [
        {**dict(zip(("model", "track", "item", "attempt"), r.identity)), "adoption_status": a, "note": r.note}
        for r, a in ((bad, "selected"), (good, "selected"), (bad, "excluded"))
    ]
    rows[1]["attempt"] = rows[2]["attempt"] = "2"
    issues = statement_mismatches(pd.DataFrame(rows))
    assert len(issues) == 1
    issue = issues[0]
    assert (issue["reason"], issue["item"], issue["attempt"]) == ("statement_mismatch", "theorem-plus-zero", "1")
    assert issue["verdict"] == source and issue["task_file"] == str(task)
    assert (issue["verdict_sha256"], issue["task_sha256"]) == ("e" * 64, statement.sha256)


def test_plan_gives_the_rows_job_the_statements_of_its_verdicts(tmp_path, project_root):
    """The verdict-rows job reads the task and statement file of each theorem / open-conjecture
    item scored from a verdict (a changed statement reruns it) and is told a config's own task file."""
    from tcsexam.workflow import Plan

    item = "theorem-gauss-sum"
    (tmp_path / "verdicts" / "m" / item).mkdir(parents=True)
    (tmp_path / "verdicts" / "m" / item / "1.json").write_text("{}")
    cons = load_suite_item("construction")
    (tmp_path / "verdicts" / "m" / cons).mkdir(parents=True)
    (tmp_path / "verdicts" / "m" / cons / "1.json").write_text("{}")
    config = {
        "suite": "lite",
        "protocol": "offline",
        "results_dir": "res",
        "solvers_dir": str(tmp_path / "solvers"),
        "verdicts_dir": str(tmp_path / "verdicts"),
        "models": [{"name": "m", "attempts": ["1"]}],
        "run": {"instances": {}, "task_files": {}},
    }

    class W:
        model = "m"

    plan = Plan(config, project_root)
    assert plan.verdict_statement_inputs(W) == [f"config/tasks/{item}.yaml", f"config/tasks/proofs/{item}.v"]
    assert plan.verdict_task_files_arg(W) == ""
    own = write_task(tmp_path / "own", item, "Definition statement : Prop := 0 = 0.\n")
    config["run"]["task_files"] = {item: str(own)}
    plan = Plan(config, project_root)
    assert plan.verdict_task_files_arg(W) == f"--task-file {item}={own}"
    inputs = plan.verdict_statement_inputs(W)
    assert inputs[0] == str(own) and inputs[1].endswith(f"own/proofs/{item}.v")


def load_suite_item(track: str) -> str:
    from tcsexam.suites import load_suite

    return load_suite("lite").tracks[track][0]
