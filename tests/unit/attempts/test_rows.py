"""Attempt rows: solver rows from real scoring, failure rows, the table."""

from __future__ import annotations

import csv
import json

import pytest

from tcsexam.attempts.rows import AttemptRow, failed_row, read_row, solver_row, table_text, write_row, write_table
from tcsexam.cli import main
from tcsexam.errors import InputError

REF = {
    "schema_version": 1,
    "reference_id": "test-ref-v1",
    "scale_floors": {"relative": 0.02, "absolute": 1e-9},
    "tasks": {
        "maxcut-mqlib": {
            "kind": "objective",
            "direction": "maximize",
            "instances": {"a": [10, 12, 14], "b": [100, 100, 100]},
        }
    },
}


@pytest.fixture
def ref(tmp_path):
    path = tmp_path / "ref.json"
    path.write_text(json.dumps(REF))
    return path


def _records(tmp_path, records, seal=True):
    """A records.json as `tcsexam run` writes it: each record with the harness version and the
    digest of its content."""
    from tcsexam import HARNESS_VERSION
    from tcsexam.records.digest import record_digest
    from tcsexam.records.key import ensure_key

    records = [{"harness_version": HARNESS_VERSION, **r} for r in records]
    if seal:
        key = ensure_key(tmp_path)
        records = [{**r, "digest": record_digest(r, key)} for r in records]
    path = tmp_path / "records.json"
    path.write_text(json.dumps(records))
    return path


def test_solver_row_valid_uses_the_scorer(tmp_path, ref):
    recs = _records(
        tmp_path, [{"instance": "a", "status": "ok", "A": 12, "reward": 0.5}, {"instance": "b", "status": "timeout"}]
    )
    rel = tmp_path / "out" / "relative.json"
    row, result = solver_row(
        model="m",
        task="maxcut-mqlib",
        attempt="1",
        protocol="offline",
        records=recs,
        reference=ref,
        relative_output=rel,
    )
    assert row.score_status == "valid" and row.score == 0.25  # the spec's worked example
    assert row.score_type == "fixed_reference_relative" and row.solver_protocol == "offline"
    assert json.loads(rel.read_text())["relative_score"] == 0.25
    assert result["reference_id"] == "test-ref-v1"
    assert "test-ref-v1" in row.note and "checker_reward 0.5" in row.note


def test_solver_row_infrastructure_error_is_judge_failed_and_replaces_stale_output(tmp_path, ref):
    rel = tmp_path / "relative.json"
    rel.write_text("{}")  # stale output of an earlier, successful scoring
    recs = _records(
        tmp_path, [{"instance": "a", "status": "infrastructure_error"}, {"instance": "b", "status": "ok", "A": 100}]
    )
    row, result = solver_row(
        model="m",
        task="maxcut-mqlib",
        attempt="1",
        protocol="offline",
        records=recs,
        reference=ref,
        relative_output=rel,
    )
    assert result is None and row.score is None
    assert row.score_status == "judge_failed"
    assert "infrastructure" in row.note
    refusal = json.loads(rel.read_text())  # the stale output is replaced by the refusal
    assert refusal["relative_score"] is None and refusal["score_status"] == "judge_failed"
    assert "infrastructure" in refusal["refused"] and refusal["reference_id"] == "test-ref-v1"


def test_solver_row_missing_instance_is_judge_failed(tmp_path, ref):
    recs = _records(tmp_path, [{"instance": "a", "status": "ok", "A": 12}])
    row, _ = solver_row(
        model="m",
        task="maxcut-mqlib",
        attempt="1",
        protocol="online",
        records=recs,
        reference=ref,
        relative_output=tmp_path / "r.json",
    )
    assert row.score_status == "judge_failed" and "b" in row.note


def test_solver_row_without_records_is_not_finished(tmp_path, ref):
    row, _ = solver_row(
        model="m",
        task="maxcut-mqlib",
        attempt="2",
        protocol="offline",
        records=tmp_path / "nope.json",
        reference=ref,
        relative_output=tmp_path / "r.json",
    )
    assert row.score_status == "not_finished" and row.attempt == "2"


def test_solver_row_broken_reference_is_an_input_error(tmp_path):
    bad = tmp_path / "ref.json"
    bad.write_text('{"reference_id": "x"}')
    with pytest.raises(InputError, match="ref.json"):
        solver_row(
            model="m",
            task="maxcut-mqlib",
            attempt="1",
            protocol="offline",
            records=tmp_path / "r.json",
            reference=bad,
            relative_output=tmp_path / "o.json",
        )


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(track="proofs"), "unknown track"),
        (dict(score_status="done"), "score_status"),
        (dict(score=float("nan")), "finite score"),
        (dict(track="theorem", score_type="original_task_score", solver_protocol="", score=0.5), "0 or 1"),
        (dict(track="construction", score_type="original_task_score", solver_protocol="", score=-1.0), ">= 0"),
        (dict(score=1.5), r"\[0, 1\]"),
        (dict(solver_protocol=""), "online or offline"),
        (dict(score_type="original_task_score"), "score_type"),
        (dict(attempt="1,2"), "commas"),
        (dict(score_status="missing"), "has no score"),
    ],
)
def test_row_validation(kwargs, match):
    base = dict(
        model="m",
        track="solver",
        item="sat-satlib",
        attempt="1",
        score=0.5,
        adoption_status="selected",
        score_status="valid",
        score_type="fixed_reference_relative",
        solver_protocol="offline",
    )
    base.update(kwargs)
    with pytest.raises(InputError, match=match):
        AttemptRow(**base)


def test_construction_may_exceed_one():
    row = AttemptRow("m", "construction", "c", "1", 1.7, "selected", "valid", "original_task_score", "")
    assert row.score == 1.7


def test_table_full_precision_and_duplicates(tmp_path):
    score = 0.1 + 0.2  # 0.30000000000000004: must survive the CSV exactly
    rows = [
        AttemptRow("m", "solver", "sat-satlib", "1", score, "selected", "valid", "fixed_reference_relative", "offline"),
        failed_row("m", "theorem", "t", "1", "missing", "no verdict"),
    ]
    paths = []
    for i, row in enumerate(rows):
        paths.append(tmp_path / f"row{i}.json")
        write_row(paths[-1], row)
    out = tmp_path / "attempts.csv"
    write_table(paths, out)
    got = list(csv.DictReader(out.open()))
    assert float(got[0]["score"]) == score
    assert got[1]["score"] == "" and got[1]["score_status"] == "missing" and got[1]["note"] == "no verdict"
    assert list(got[0])[:9] == [
        "model",
        "track",
        "item",
        "attempt",
        "score",
        "adoption_status",
        "score_status",
        "score_type",
        "solver_protocol",
    ]
    with pytest.raises(InputError, match="duplicate"):
        write_table([paths[0], paths[0]], tmp_path / "dup.csv")
    assert not (tmp_path / "dup.csv").exists()
    assert read_row(paths[0]) == rows[0]
    with pytest.raises(InputError, match="duplicate"):
        table_text([rows[0], rows[0]])


def test_cli_solver_row_and_table(tmp_path, ref, capsys):
    recs = _records(tmp_path, [{"instance": "a", "status": "ok", "A": 14}, {"instance": "b", "status": "ok", "A": 100}])
    row = tmp_path / "row.json"
    rc = main(
        [
            "attempts",
            "solver-row",
            "--records",
            str(recs),
            "--task",
            "maxcut-mqlib",
            "--reference",
            str(ref),
            "--model",
            "m",
            "--attempt",
            "1",
            "--protocol",
            "offline",
            "--relative-output",
            str(tmp_path / "rel.json"),
            "--output",
            str(row),
        ]
    )
    assert rc == 0
    assert json.loads(row.read_text())["score_status"] == "valid"
    miss = tmp_path / "miss.json"
    assert (
        main(
            [
                "attempts",
                "missing-row",
                "--model",
                "m",
                "--track",
                "Open-Conjecture",
                "--item",
                "c",
                "--attempt",
                "1",
                "--reason",
                "no verdict file",
                "--output",
                str(miss),
            ]
        )
        == 0
    )
    assert json.loads(miss.read_text())["track"] == "open_conjecture"
    assert main(["attempts", "table", "--rows", str(row), str(miss), "--output", str(tmp_path / "a.csv")]) == 0
    assert "2 attempt rows" in capsys.readouterr().err
    # bad input: one line, exit 1, no output
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    assert main(["attempts", "table", "--rows", str(bad), "--output", str(tmp_path / "b.csv")]) == 1
    assert not (tmp_path / "b.csv").exists()
    assert "bad.json" in capsys.readouterr().err
