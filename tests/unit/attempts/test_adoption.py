"""The adoption file: its rules (reasons, known models and items, replacements, no excess
adoptions), its decisions in the attempt table, and the plan it adds attempts to."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from tcsexam.attempts.adoption import Decision, load_adoption, read_adoption
from tcsexam.attempts.rows import AttemptRow, failed_row, table_text, write_rows
from tcsexam.cli import main
from tcsexam.errors import InputError
from tcsexam.suites import load_suite

HEADER = "model,track,item,attempt,adoption_status,reason,replaces\n"
PLANNED = {"m": ["1"], "n": ["1", "2"]}
#: the tiny test config's task files (two instances each), which config/test/online judged
_TEST_TASKS = {
    t: f"config/test/tasks/{t}.yaml"
    for t in ("maxcut-mqlib", "sat-satlib", "tsp-tsplib", "coloring-dimacs", "maxsat-wcnf")
}


@pytest.fixture
def lite():
    return load_suite("lite")


def _file(tmp_path: Path, body: str, header: str = HEADER) -> Path:
    path = tmp_path / "adoption.csv"
    path.write_text(header + body)
    return path


def test_replacement_excludes_the_replaced_attempt_with_its_reason(tmp_path, lite):
    path = _file(
        tmp_path,
        "m,solver,sat-satlib,2,selected,node failure on attempt 1,1\n"
        "m,Theorem,theorem-sum-odds-square,1,selected_provisional,checker release candidate,\n"
        "n,construction,construction-golomb-ruler-14,2,excluded,judge crashed twice,\n",
    )
    got = load_adoption(path, lite, PLANNED)
    assert got[("m", "sat-satlib")] == {
        "2": Decision("selected", "node failure on attempt 1", "1"),
        "1": Decision("excluded", "replaced by 2: node failure on attempt 1"),
    }
    assert got[("m", "theorem-sum-odds-square")]["1"].adoption_status == "selected_provisional"
    assert got[("n", "construction-golomb-ruler-14")]["2"] == Decision("excluded", "judge crashed twice")


@pytest.mark.parametrize(
    "body, needle",
    [
        (
            "m,solver,sat-satlib,1,excluded,,\n",
            "row 1 (m,solver,sat-satlib,1): a reason is required (the row is excluded)",
        ),
        ("m,solver,sat-satlib,1,selected_provisional,,\n", "a reason is required (the row is selected_provisional)"),
        ("m,solver,sat-satlib,2,selected,,1\n", "a reason is required (the row replaces attempt '1')"),
        ("x,solver,sat-satlib,2,selected,r,1\n", "model 'x' is not in the config's models"),
        (
            "m,solver,sat-satlb,2,selected,r,1\n",
            "item 'sat-satlb' is not a task of suite 'lite'; did you mean 'sat-satlib'?",
        ),
        ("m,theorem,sat-satlib,2,selected,r,1\n", "item 'sat-satlib' is a solver task of suite 'lite', not theorem"),
        ("m,solver,sat-satlib,2,selected,r,7\n", "replaces attempt '7', which is no planned attempt of m sat-satlib"),
        ("m,solver,sat-satlib,2,selected,r,2\n", "an attempt cannot replace itself"),
        ("m,solver,sat-satlib,2,excluded,r,1\n", "an excluded attempt cannot replace attempt '1'"),
        ("m,solver,sat-satlib,2,chosen,r,\n", "adoption_status 'chosen' is not one of"),
        (
            "m,solver,sat-satlib,2,selected,r,\n",
            "row 1: model 'm' task 'sat-satlib' would have 2 adopted attempts (1, 2) but 1",
        ),
        (
            "n,solver,sat-satlib,3,selected,r,\nn,solver,sat-satlib,4,selected,r,1\n",
            "rows 1, 2: model 'n' task 'sat-satlib' would have 3 adopted attempts",
        ),
        (
            "m,solver,sat-satlib,2,selected,r,1\nm,solver,sat-satlib,1,selected,r,\n",
            "row 2 (m,solver,sat-satlib,1): adopted",
        ),
        ("m,solver,sat-satlib,2,selected,r,1\nm,solver,sat-satlib,2,selected,r,1\n", "names the same attempt as row 1"),
        ("m,solver,,2,selected,r,1\n", "item is empty"),
        ("m,solver,sat-satlib,2 b,selected,r,1\n", "attempt '2 b' is not an attempt id"),
    ],
)
def test_bad_rows_are_one_line_naming_file_and_row(tmp_path, lite, body, needle):
    path = _file(tmp_path, body)
    with pytest.raises(InputError) as err:
        load_adoption(path, lite, PLANNED)
    assert str(path) in str(err.value) and needle in str(err.value), err.value
    assert "\n" not in str(err.value)


def test_missing_column_and_missing_file(tmp_path, lite):
    with pytest.raises(InputError, match="missing column"):
        read_adoption(
            _file(
                tmp_path,
                "m,solver,sat-satlib,2,selected,r\n",
                header="model,track,item,attempt,adoption_status,reason\n",
            )
        )
    with pytest.raises(InputError, match="adoption file not found"):
        read_adoption(tmp_path / "nope.csv")


def _rows() -> list[AttemptRow]:
    ok = dict(score_status="valid", score_type="fixed_reference_relative", solver_protocol="offline")
    return [
        failed_row("m", "solver", "sat-satlib", "1", "judge_failed", "infrastructure_error on uf50-01", "offline"),
        AttemptRow("m", "solver", "sat-satlib", "2", 0.5, "selected", **ok, note="reference r"),
        AttemptRow("m", "solver", "maxcut-mqlib", "1", 0.25, "selected", **ok),
    ]


def test_table_cli_applies_the_file_and_keeps_every_row(tmp_path, capsys):
    rows_file = tmp_path / "rows.json"
    write_rows(rows_file, _rows())
    adoption = _file(tmp_path, "m,solver,sat-satlib,2,selected,node failure,1\n")
    out = tmp_path / "attempts.csv"
    rc = main(
        [
            "attempts",
            "table",
            "--rows",
            str(rows_file),
            "--adoption",
            str(adoption),
            "--suite",
            "lite",
            "--planned",
            "m=1",
            "--output",
            str(out),
        ]
    )
    assert rc == 0, capsys.readouterr().err
    table = list(csv.DictReader(io.StringIO(out.read_text())))
    assert [(r["item"], r["attempt"], r["adoption_status"], r["reason"], r["replaces"]) for r in table] == [
        ("sat-satlib", "1", "excluded", "replaced by 2: node failure", ""),
        ("sat-satlib", "2", "selected", "node failure", "1"),
        ("maxcut-mqlib", "1", "selected", "", ""),
    ]
    assert "reason" not in table_text(_rows()).splitlines()[0]  # without an adoption file: unchanged


def test_table_cli_adoption_needs_its_context(tmp_path, capsys):
    rows_file = tmp_path / "rows.json"
    write_rows(rows_file, _rows())
    adoption = _file(tmp_path, "m,solver,sat-satlib,2,selected,r,1\n")
    rc = main(
        [
            "attempts",
            "table",
            "--rows",
            str(rows_file),
            "--adoption",
            str(adoption),
            "--output",
            str(tmp_path / "a.csv"),
        ]
    )
    assert rc == 2 and "needs --suite and --planned" in capsys.readouterr().err


# --- the plan ------------------------------------------------------------------------------


def _plan(tmp_path: Path, **config):
    from tcsexam.workflow.plan import Plan

    root = Path(__file__).resolve().parents[3]
    base = {"models": [{"name": "demo-fast", "attempts": ["1"]}, {"name": "demo-weak", "attempts": ["1"]}]}
    return Plan({**base, **config}, root)


def test_adoption_adds_attempts_to_the_plan_for_any_track(tmp_path):
    path = _file(
        tmp_path,
        "demo-fast,solver,sat-satlib,2,selected,node failure,1\n"
        "demo-fast,theorem,theorem-sum-odds-square,r2,selected,re-judged,1\n",
    )
    plan = _plan(tmp_path, adoption=str(path))
    plan.check()
    attempts = {(p.item, p.attempt) for p in plan.planned if p.model == "demo-fast"}
    assert {("sat-satlib", "1"), ("sat-satlib", "2"), ("theorem-sum-odds-square", "r2")} <= attempts
    assert ("maxcut-mqlib", "2") not in attempts
    # the new Solver attempt has its own job (here: no candidate folder, so a missing row)
    row = next(p.row for p in plan.planned if (p.item, p.attempt) == ("sat-satlib", "2"))
    assert "/missing/solver/demo-fast/sat-satlib/2/" in row

    class W:
        model = "demo-fast"

    assert plan.attempts_arg(W) == "1 --item-attempt theorem-sum-odds-square=r2"
    assert plan.cohort_models() == "demo-fast=1 demo-weak=1"  # the planned repetitions do not change
    assert plan.table_args().startswith(f"--adoption {path} --suite lite --planned demo-fast=1 demo-weak=1")


def test_without_an_adoption_file_nothing_changes(tmp_path):
    plan = _plan(tmp_path)

    class W:
        model = "demo-fast"

    assert plan.table_args() == "" and plan.table_inputs() == [] and plan.attempts_arg(W) == "1"
    assert len(plan.planned) == 2 * 20


@pytest.mark.parametrize(
    "config, needle",
    [
        (
            {"protocol": "online"},
            "config protocol: online takes the Solver rows from judged records: set online_records_dir",
        ),
        ({"online_records_dir": "x"}, "config online_records_dir: x is read only with protocol: online"),
        ({"adoption": "nope.csv"}, "config adoption: adoption file nope.csv not found"),
        (
            {"protocol": "online", "online_records_dir": "no-such-dir"},
            "config online_records_dir: folder no-such-dir not found",
        ),
    ],
)
def test_protocol_and_adoption_config_errors_are_one_line(tmp_path, config, needle):
    with pytest.raises(InputError) as err:
        _plan(tmp_path, **config).check()
    assert needle in str(err.value)


def test_a_malformed_provenance_file_is_one_line_before_any_job(tmp_path):
    """provenance.json is free-form but must be JSON: the DAG-time check reads it (before, the
    ingest job failed mid-run with the line only in its log)."""
    import shutil

    online = tmp_path / "online"
    shutil.copytree(Path(__file__).resolve().parents[3] / "config/test/online", online)
    config = {"protocol": "online", "online_records_dir": str(online), "run": {"task_files": _TEST_TASKS}}
    _plan(tmp_path, **config).check()  # the bundled judged records pass
    bad = online / "demo-weak" / "tsp-tsplib" / "1" / "provenance.json"
    bad.write_text("{judge: session")
    with pytest.raises(InputError) as err:
        _plan(tmp_path, **config).check()
    assert str(err.value).startswith(f"{bad}: malformed provenance file")
