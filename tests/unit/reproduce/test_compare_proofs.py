"""`tcsexam compare` reports proofs whose verdicts differ between two runs (the manifests'
`proofs`), and proof items checked against other statements as incomparable."""

from __future__ import annotations

import copy
import json

import pytest

from tcsexam.cli import main
from tcsexam.reproduce.compare import compare_runs
from tcsexam.reproduce.compare_inputs import PROOF_COMPARED, proof_changes, statement_changes

HEADER = "model,track,item,attempt,score,adoption_status,score_status,score_type,solver_protocol\n"
ITEM = "theorem-sum-odds-square"


def proof(**kw):
    entry = {
        "status": "complete",
        "complete": True,
        "resolution": "proof",
        "checker": "coq",
        "checker_version": "8.16.1",
        "statement_sha256": "a" * 64,
        "proof_sha256": "b" * 64,
        "theorem": "sum_odds_square",
        "axioms": [],
        "sandbox": "bwrap",
        "limiter": "cgroup",
        "wall_s": 2.9,
        "reason": "a proof of the statement",
        "verdict_sha256": "c" * 64,
    }
    entry.update(kw)
    return entry


def make_run(path, proofs, score="1.0"):
    """A finished run whose only scored row is the theorem attempt and whose manifest holds `proofs`."""
    path.mkdir(parents=True)
    (path / "attempts.csv").write_text(HEADER + f"m,theorem,{ITEM},1,{score},selected,valid,original_task_score,\n")
    index = {
        "schema_version": 1,
        "suite": "lite",
        "solver_protocol": "offline",
        "solver_reference_id": "ref-a",
        "status": "incomplete",
        "models": {"m": {"status": "incomplete", "index": None, "track_means": {}, "task_means": {}}},
    }
    (path / "index.json").write_text(json.dumps(index))
    (path / "manifest.json").write_text(json.dumps({"schema_version": 1, "proofs": proofs}))
    return path


def section(**entries):
    """{"m": {ITEM: {attempt: entry}}}"""
    return {"m": {ITEM: dict(entries)}}


def test_same_proofs_are_identical(tmp_path):
    base = make_run(tmp_path / "a", section(**{"1": proof()}))
    # wall time, reason text and the verdict file's hash are not compared
    cand = make_run(tmp_path / "b", section(**{"1": proof(wall_s=5.1, reason="other words", verdict_sha256="d" * 64)}))
    result = compare_runs(base, cand, resamples=10)
    assert result["verdict"] == "identical" and result["proofs"] == []
    assert "proofs" not in result["inputs"]["differ"]


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("status", "timeout"),
        ("resolution", "refutation"),
        ("checker_version", "8.18.0"),
        ("axioms", ["Coq.Logic.Classical_Prop.classic"]),
        ("proof_sha256", "e" * 64),
        ("complete", False),
    ],
)
def test_a_differing_proof_verdict_is_reported(tmp_path, field, value):
    base = make_run(tmp_path / "a", section(**{"1": proof()}))
    cand = make_run(tmp_path / "b", section(**{"1": proof(**{field: value})}))
    result = compare_runs(base, cand, resamples=10)
    assert "proofs" in result["inputs"]["differ"]
    assert result["proofs"] == [
        {
            "model": "m",
            "item": ITEM,
            "attempt": "1",
            "fields": {field: {"baseline": proof()[field], "candidate": value}},
        }
    ]
    # the scores of this fixture are equal: the verdict says so, and its reasons name the proof
    assert result["verdict"] == "identical"
    assert any(f"proof m/{ITEM}/1: {field}" in r for r in result["reasons"]), result["reasons"]


def test_timeout_versus_crash_scores_equal_but_differs(tmp_path):
    """Both score 0: the records-level view (scores) says identical, the proofs do not."""
    base = make_run(tmp_path / "a", section(**{"1": proof(status="timeout", complete=False)}), score="0.0")
    cand = make_run(tmp_path / "b", section(**{"1": proof(status="crash", complete=False)}), score="0.0")
    out = tmp_path / "c.json"
    assert (
        main(
            [
                "compare",
                str(base),
                str(cand),
                "--output",
                str(out),
                "--resamples",
                "10",
                "--report",
                str(tmp_path / "c.html"),
            ]
        )
        == 0
    )
    result = json.loads(out.read_text())
    assert result["proofs"][0]["fields"] == {"status": {"baseline": "timeout", "candidate": "crash"}}
    assert "status timeout -&gt; crash" in (tmp_path / "c.html").read_text()


def test_proof_in_one_run_only(tmp_path):
    base = make_run(tmp_path / "a", section(**{"1": proof(), "2": proof()}))
    cand = make_run(tmp_path / "b", section(**{"1": proof()}))
    changes = compare_runs(base, cand, resamples=10)["proofs"]
    assert changes == [{"model": "m", "item": ITEM, "attempt": "2", "only_in": "baseline"}]


def test_another_statement_is_incomparable(tmp_path):
    base = make_run(tmp_path / "a", section(**{"1": proof()}))
    cand = make_run(tmp_path / "b", section(**{"1": proof(statement_sha256="f" * 64)}))
    out = tmp_path / "c.json"
    assert main(["compare", str(base), str(cand), "--output", str(out), "--resamples", "10"]) == 4
    result = json.loads(out.read_text())
    assert result["verdict"] == "incomparable" and "proof_statements" in result["inputs"]["differ"]
    assert result["inputs"]["details"]["proof_statements"] == {ITEM: {"baseline": ["a" * 64], "candidate": ["f" * 64]}}
    assert any(r.startswith(f"statement of {ITEM}: statement_sha256 aaaaaaaaaaaa") for r in result["reasons"])
    assert result["proofs"][0]["fields"]["statement_sha256"] == {"baseline": "a" * 64, "candidate": "f" * 64}


def test_sections_directly():
    a = section(**{"1": proof()})
    b = copy.deepcopy(a)
    assert proof_changes(a, b) == [] and statement_changes(a, b) == {}
    b["m"][ITEM]["1"]["axioms"] = ["x"]
    b["other"] = {ITEM: {"1": proof(status="invalid")}}  # a model of one run only: not compared
    assert [c["fields"] for c in proof_changes(a, b)] == [{"axioms": {"baseline": [], "candidate": ["x"]}}]
    # another model's digest of the same item still makes the item's statement differ
    assert statement_changes(a, b) == {}
    b["other"][ITEM]["1"]["statement_sha256"] = "9" * 64
    assert statement_changes(a, b) == {ITEM: {"baseline": ["a" * 64], "candidate": ["9" * 64, "a" * 64]}}
    assert set(PROOF_COMPARED) >= {"status", "resolution", "checker_version", "statement_sha256", "axioms"}


def test_run_without_proofs_section_compares_nothing(tmp_path):
    base = make_run(tmp_path / "a", section(**{"1": proof()}))
    cand = make_run(tmp_path / "b", section(**{"1": proof(status="timeout")}))
    (cand / "manifest.json").write_text(json.dumps({"schema_version": 1}))
    assert compare_runs(base, cand, resamples=10)["proofs"] == []
