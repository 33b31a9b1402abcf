"""Condition effects: Pass@1 and Explain means per condition, paired bootstrap differences."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from tcsexam.errors import InputError
from tcsexam.orspace.effects import condition_effects, render_html
from tcsexam.scoring.bootstrap import interval, task_rng

A, B = "revise-all_filesystem_both", "revise-all_flat_both"


def objectives(slug, passed: list[bool], mode="build"):
    rows = [
        {
            "workspace_id": f"or_space_{i + 1:03d}_{mode}",
            "mode": mode,
            "passed": p,
            "failure_mode": "none" if p else "wrong_objective",
        }
        for i, p in enumerate(passed)
    ]
    return {"modes": [mode], "condition": slug, "rows": rows}


def explain(scores: list[float], cap=12.0, setting="paper"):
    rows = [
        {"workspace_id": f"or_space_{i + 1:03d}_explain", "score": s, "unfaithful": s < 50}
        for i, s in enumerate(scores)
    ]
    return {
        "n": len(rows),
        "complete": True,
        "mean_score": float(np.mean(scores)),
        "penalty_setting": setting,
        "penalty_cap": cap,
        "unfaithful_share": None,
        "rows": rows,
    }


def test_pass_rates_intervals_and_the_paired_difference():
    a = [True] * 8 + [False] * 2
    b = [True] * 5 + [False] * 5
    doc = condition_effects("m", {A: objectives(A, a), B: objectives(B, b)}, seed=7, resamples=2000)
    assert doc["conditions"][A]["modes"]["build"]["pass_at_1"] == 0.8
    assert doc["conditions"][B]["modes"]["build"]["passed"] == 5
    table = {r["failure_mode"]: r["count"] for r in doc["conditions"][B]["failure_table"]}
    assert table["none"] == 5 and table["wrong_objective"] == 5 and table["timeout"] == 0
    (pair,) = doc["paired_differences"]
    assert (pair["a"], pair["b"], pair["mode"], pair["n"]) == (A, B, "build", 10)
    assert pair["difference"] == pytest.approx(0.3)
    # the documented draw: task_rng(seed, item) resampling the paired differences
    diff = np.array(a, dtype=float) - np.array(b, dtype=float)
    idx = task_rng(7, f"orspace|m|build|{A}|{B}").integers(0, 10, size=(2000, 10))
    assert pair["ci95"] == interval(diff[idx].mean(axis=1))
    lo, hi = pair["ci95"]
    assert lo <= 0.3 <= hi
    assert condition_effects("m", {A: objectives(A, a), B: objectives(B, b)}, seed=7, resamples=2000) == doc


def test_only_common_problems_are_paired_and_explain_is_compared():
    a = objectives(A, [True, True, False])
    b = objectives(B, [False, True])
    doc = condition_effects("m", {A: a, B: b}, {A: explain([80, 60, 40]), B: explain([70, 50, 40])}, resamples=500)
    build = next(p for p in doc["paired_differences"] if p["mode"] == "build")
    assert build["n"] == 2 and build["difference"] == 0.5
    ex = next(p for p in doc["paired_differences"] if p["mode"] == "explain")
    assert ex["difference"] == pytest.approx(20 / 3) and ex["measure"] == "mean_score"
    assert doc["conditions"][A]["explain"]["mean_score_label"] == "60.00 (penalty cap 12, paper)"
    assert doc["conditions"][A]["explain"]["unfaithful"] == 1
    html = render_html(doc)
    assert "penalty cap 12, paper" in html and A in html and "Paired differences" in html


def test_conditions_never_mix():
    with pytest.raises(InputError, match="made under condition"):
        condition_effects("m", {A: objectives(B, [True])})
    with pytest.raises(InputError, match="explain scores of condition .* were made under"):
        condition_effects("m", {A: objectives(A, [True])}, {A: {**explain([1.0]), "condition": B}})
    with pytest.raises(InputError, match="different penalty caps"):
        condition_effects(
            "m",
            {A: objectives(A, [True]), B: objectives(B, [True])},
            {A: explain([1.0]), B: explain([1.0], cap=20.0, setting="release")},
        )


def test_cli(tmp_path):
    (tmp_path / "a.json").write_text(json.dumps(objectives(A, [True, False])))
    (tmp_path / "b.json").write_text(json.dumps(objectives(B, [False, False])))
    proc = subprocess.run(
        [sys.executable, "-m", "tcsexam", "orspace", "effects", "--model", "m", "--objectives"]
        + [f"{A}={tmp_path / 'a.json'}", f"{B}={tmp_path / 'b.json'}"]
        + ["--output", str(tmp_path / "e.json"), "--html", str(tmp_path / "e.html"), "--resamples", "200"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    assert f"m {A}: build 1/2" in proc.stdout
    assert json.loads((tmp_path / "e.json").read_text())["paired_differences"][0]["difference"] == 0.5
    assert (tmp_path / "e.html").read_text().startswith("<!DOCTYPE html>")
