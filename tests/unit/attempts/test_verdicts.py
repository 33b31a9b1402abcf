"""Checker verdicts -> attempt rows (spec: partial credit -> 0, construction rewards unchanged)."""

from __future__ import annotations

import json

import pytest

from tcsexam.attempts.verdicts import verdict_row, verdict_row_file
from tcsexam.errors import InputError


def V(**kw):
    base = {"model": "m", "track": "theorem", "item": "t1", "attempt": 1, "original_reward": 0.75, "complete": False}
    base.update(kw)
    return base


def test_theorem_partial_credit_becomes_zero():
    row = verdict_row(V(), "v.json")
    assert (row.score, row.score_status, row.score_type, row.solver_protocol) == (
        0.0,
        "valid",
        "original_task_score",
        "",
    )
    assert row.attempt == "1" and "original_reward 0.75" in row.note


def test_complete_proof_is_one_whatever_the_reward():
    assert verdict_row(V(complete=True, original_reward=None), "v").score == 1.0
    row = verdict_row(V(track="Open-Conjecture", complete=True), "v")
    assert row.track == "open_conjecture" and row.score == 1.0


def test_construction_reward_unchanged_and_may_exceed_one():
    row = verdict_row(V(track="construction", original_reward=1.37, complete=None), "v")
    assert row.score == 1.37
    with pytest.raises(InputError, match=">= 0"):
        verdict_row(V(track="construction", original_reward=-0.1), "v")
    with pytest.raises(InputError, match="needs original_reward"):
        verdict_row(V(track="construction", original_reward=None), "v")


@pytest.mark.parametrize("status", ["judge_failed", "not_finished"])
def test_checker_failure_statuses(status):
    row = verdict_row(V(status=status, message="lean timed out"), "v")
    assert row.score is None and row.score_status == status and "lean timed out" in row.note


@pytest.mark.parametrize(
    "data, match",
    [
        (V(track="solver"), "scored from their records"),
        (V(complete="yes"), "true or false"),
        (V(complete=None), "needs 'complete'"),
        (V(original_reward=float("inf")), "finite"),
        (V(status="ok"), "status must be"),
        (V(extra=1), "unknown key"),
        (V(attempt=True), "attempt"),
        ({"model": "m"}, "missing key 'track'"),
        ([], "JSON object"),
    ],
)
def test_bad_verdicts(data, match):
    with pytest.raises(InputError, match=match):
        verdict_row(data, "v.json")


def test_identity_must_match_the_planned_file(tmp_path):
    path = tmp_path / "1.json"
    path.write_text(json.dumps(V()))
    assert verdict_row_file(path, {"model": "m", "track": "theorem", "item": "t1", "attempt": "1"}).score == 0.0
    with pytest.raises(InputError, match="planned for 'other'"):
        verdict_row_file(path, {"model": "other"})
    path.write_text("{ nope")
    with pytest.raises(InputError, match="1.json"):
        verdict_row_file(path)


def test_model_verdict_rows_fill_in_missing(tmp_path):
    from tcsexam.attempts.verdicts import model_verdict_rows
    from tcsexam.suites import load_suite

    suite = load_suite("lite")
    item = suite.tracks["theorem"][0]
    path = tmp_path / "m" / item / "1.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(V(item=item, complete=True)))
    rows = model_verdict_rows("m", suite, tmp_path, ["1", "2"])
    n_items = sum(len(suite.tracks[t]) for t in ("theorem", "construction", "open_conjecture"))
    assert len(rows) == 2 * n_items
    assert rows[0].identity == ("m", "theorem", item, "1") and rows[0].score == 1.0
    assert rows[1].score_status == "missing" and rows[1].attempt == "2" and "2.json does not exist" in rows[1].note
    assert {r.score_status for r in rows[2:]} == {"missing"}
    # a verdict filed under the wrong item is refused, naming the file
    wrong = tmp_path / "m" / suite.tracks["construction"][0] / "1.json"
    wrong.parent.mkdir(parents=True)
    wrong.write_text(json.dumps(V(item=item)))
    with pytest.raises(InputError, match="planned for"):
        model_verdict_rows("m", suite, tmp_path, ["1"])


def test_bundled_demo_models_submit_proofs_not_verdicts():
    """The bundled demo models' theorem and open-conjecture items are proof.v submissions the
    pipeline checks (docs/proofs.md); no hand-written verdict fixture is left to score them."""
    from pathlib import Path

    from tcsexam.proofs.task import load_proof_task
    from tcsexam.suites import load_suite

    root = Path(__file__).resolve().parents[3]
    assert sorted((root / "config" / "verdicts").glob("*/*/*.json")) == []
    suite = load_suite("full")
    items = [*suite.tracks["theorem"], *suite.tracks["open_conjecture"]]
    assert len(suite.tracks["theorem"]) >= 8 and len(suite.tracks["open_conjecture"]) >= 4
    for item in items:
        task = load_proof_task(root / "config" / "tasks" / f"{item}.yaml")
        assert task.checker == "coq" and task.statement_file.is_file()
        for model in ("demo-strong", "demo-fast", "demo-weak"):
            assert (root / "solvers" / model / item / "1" / "proof.v").is_file(), (model, item)


EVIDENCE = {"checker": "lean4", "checker_version": "4.9.0", "statement_sha256": "a" * 64, "axioms": ["propext"]}


@pytest.mark.parametrize(
    ("status", "complete", "score"),
    [
        ("complete", True, 1.0),
        ("incomplete", False, 0.0),
        ("invalid", False, 0.0),
        ("timeout", False, 0.0),
        ("memout", False, 0.0),
        ("crash", False, 0.0),
    ],
)
def test_proof_checker_statuses(status, complete, score):
    row = verdict_row(V(status=status, complete=complete, original_reward=0.4, **EVIDENCE), "v.json")
    assert (row.score, row.score_status) == (score, "valid")
    assert status in row.note and "lean4 4.9.0" in row.note and "no checker evidence" not in row.note


def test_proof_checker_status_consistency_and_infrastructure():
    with pytest.raises(InputError, match="complete is true but the checker's status is 'incomplete'"):
        verdict_row(V(status="incomplete", complete=True, **EVIDENCE), "v.json")
    row = verdict_row(V(status="infrastructure_error", complete=False, **EVIDENCE), "v.json")
    assert row.score_status == "judge_failed" and row.score is None


@pytest.mark.parametrize(
    "drop",
    ["checker", "checker_version", "statement_sha256", "axioms", "none-checker"],
)
def test_verdict_without_evidence_is_flagged(drop):
    data = V(complete=True, **EVIDENCE)
    if drop == "none-checker":
        data["checker"] = "none: written by hand"
    else:
        del data[drop]
    row = verdict_row(data, "v.json")
    assert row.score == 1.0  # still scored (the spec's rule), but flagged
    assert "no checker evidence" in row.note and (drop.replace("none-", "") in row.note)


def test_index_lists_unverified_proofs():
    import pandas as pd

    from tcsexam.scoring.proof_issues import unverified_proofs

    df = pd.DataFrame(
        [
            {
                "model": "m",
                "track": "theorem",
                "item": "t1",
                "attempt": "1",
                "adoption_status": "selected",
                "note": "complete proof accepted; no checker evidence (checker_version missing): taken on trust",
            },
            {
                "model": "m",
                "track": "theorem",
                "item": "t2",
                "attempt": "1",
                "adoption_status": "selected",
                "note": "complete proof accepted; checker coq 8.16.1",
            },
            {
                "model": "m",
                "track": "open_conjecture",
                "item": "c",
                "attempt": "1",
                "adoption_status": "excluded",
                "note": "no checker evidence",
            },
        ]
    )
    issues = unverified_proofs(df)
    assert [(i["reason"], i["item"]) for i in issues] == [("unverified_proof", "t1")]
