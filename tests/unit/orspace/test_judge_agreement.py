"""judge-agreement (kappa, disagreements, reference judgments, score-length slope) on constructed
judgment sets, and explain-score repeats through a real judge endpoint on 127.0.0.1."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tcsexam.errors import InputError
from tcsexam.orspace.judge_agreement import cohen_kappa, judge_agreement, load_reference

WORKSPACES = [f"or_space_{n:03d}_explain" for n in range(1, 7)]


def _set(model: str, c3: list[bool], c4: list[bool], score: list[float], repeat: int = 0) -> dict:
    rows = [
        {
            "workspace_id": w,
            "score": s,
            "criteria": {"c3": {"verdict": a, "justification": "j"}, "c4": {"verdict": b, "justification": "j"}},
        }
        for w, a, b, s in zip(WORKSPACES, c3, c4, score, strict=True)
    ]
    return {"judge_model": model, "judge_repeat": repeat, "penalty_cap": 12.0, "rows": rows}


def test_cohen_kappa():
    assert cohen_kappa([True, True, False, False], [True, False, False, False]) == pytest.approx(0.5)
    assert cohen_kappa([True, False], [True, False]) == pytest.approx(1.0)
    assert cohen_kappa([True, True], [True, True]) is None  # one verdict everywhere: undefined
    assert cohen_kappa([], []) is None


def test_repeats_second_judge_reference_and_length():
    t, f = True, False
    sets = {
        "x0": _set("judge-x", [t, t, f, f, t, f], [t, f, f, t, t, f], [90, 70, 30, 50, 95, 20]),
        "x1": _set("judge-x", [t, t, f, f, t, f], [t, f, f, t, t, f], [90, 70, 30, 50, 95, 20], repeat=1),
        "y": _set("judge-y", [t, f, f, f, t, f], [t, f, t, t, t, f], [80, 60, 40, 50, 85, 30]),
    }
    reference = {(w, "c3"): v for w, v in zip(WORKSPACES, [t, t, f, f, t, f], strict=True)}
    words = {w: n for w, n in zip(WORKSPACES, [300, 200, 100, 150, 350, 50], strict=True)}
    doc = judge_agreement(sets, reference=reference, words=words, resamples=500)
    pairs = {(p["a"], p["b"]): p for p in doc["pairs"]}
    same = pairs["x0", "x1"]
    assert same["kind"] == "repeat" and same["criteria"]["all"]["kappa"] == pytest.approx(1.0)
    assert same["disagreements"] == [] and same["scores"]["mean_abs_difference"] == 0
    cross = pairs["x0", "y"]
    assert cross["kind"] == "cross_judge"
    assert cross["criteria"]["c3"]["n"] == 6 and cross["criteria"]["c3"]["disagreement_rate"] == pytest.approx(1 / 6)
    # c3: x0 = [1,1,0,0,1,0], y = [1,0,0,0,1,0]: observed 5/6, expected 1/2*1/3 + 1/2*2/3 = 1/2
    assert cross["criteria"]["c3"]["kappa"] == pytest.approx((5 / 6 - 0.5) / 0.5)
    assert [(d["workspace_id"], d["criterion_id"]) for d in cross["disagreements"]] == [
        ("or_space_002_explain", "c3"),
        ("or_space_003_explain", "c4"),
    ]
    assert doc["review"] == [
        {"workspace_id": "or_space_002_explain", "criterion_id": "c3"},
        {"workspace_id": "or_space_003_explain", "criterion_id": "c4"},
    ]
    assert doc["reference"]["x0"]["criteria"]["all"] == {"n": 6, "disagreement_rate": 0.0, "kappa": 1.0}
    assert doc["reference"]["y"]["criteria"]["c3"]["disagreement_rate"] == pytest.approx(1 / 6)
    slope = doc["length_slope"]["x0"]
    assert slope["points_per_100_words"] > 0 and slope["ci95"][0] <= slope["points_per_100_words"] <= slope["ci95"][1]


def test_bad_input(tmp_path):
    with pytest.raises(InputError, match="no judged criteria"):
        judge_agreement({"a": {"rows": [{"workspace_id": "w", "score": None}]}})
    bad = tmp_path / "ref.jsonl"
    bad.write_text('{"workspace_id": "w", "criterion_id": "c3", "verdict": "yes"}\n')
    with pytest.raises(InputError, match="line 1: a reference judgment needs"):
        load_reference(bad)


def test_the_project_reference_judgments_load(project_root):
    folder = project_root / "references" / "orspace-judgments"
    good = load_reference(folder / "demo_answers.jsonl")
    bad = load_reference(folder / "demo_answers_hallucinated.jsonl")
    assert set(good.values()) == {True} and set(bad.values()) == {False} and set(good) == set(bad)


def _judgment(c3: bool, c4: bool) -> dict:
    return {
        "criteria": {"c3": {"verdict": c3, "justification": "j"}, "c4": {"verdict": c4, "justification": "j"}},
        "reasoning": 30,
        "grounding": 18,
        "answer_quality": 9,
        "hallucination_penalty": 0,
        "unsupported_claims": [],
    }


def _explain(demo, tmp_path, server, model, name, *extra):
    out = tmp_path / f"{name}.json"
    env = {"PATH": "/usr/bin:/bin", "TCSEXAM_JUDGE_BASE_URL": server.base_url, "TCSEXAM_JUDGE_MODEL": model}
    cmd = [sys.executable, "-m", "tcsexam", "orspace", "explain-score", "--rubrics"]
    cmd += [str(demo["release"] / "evaluation" / "explain_evaluation" / "rubrics.jsonl")]
    cmd += ["--answers", str(demo["workspaces"] / "answers.jsonl"), "--output", str(out), *extra]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    return out


def test_repeats_are_fresh_calls_and_judges_compared(demo, tmp_path, judge_server):
    cache = str(tmp_path / "cache")
    judge_server.script = [(200, {}, judge_server.chat(json.dumps(_judgment(True, True))), 0)]
    first = _explain(demo, tmp_path, judge_server, "judge-x", "x0", "--judge-cache", cache)
    again = _explain(demo, tmp_path, judge_server, "judge-x", "x0b", "--judge-cache", cache)
    assert len(judge_server.requests) == 1  # the same judgment again: from the cache
    judge_server.script = [(200, {}, judge_server.chat(json.dumps(_judgment(True, False))), 0)]
    repeat = _explain(demo, tmp_path, judge_server, "judge-x", "x1", "--judge-cache", cache, "--judge-repeat", "1")
    other = _explain(demo, tmp_path, judge_server, "judge-y", "y", "--judge-cache", cache)
    assert len(judge_server.requests) == 3 and json.loads(repeat.read_text())["judge_repeat"] == 1
    out = tmp_path / "agreement.json"
    cmd = [sys.executable, "-m", "tcsexam", "orspace", "judge-agreement", "--judgments"]
    cmd += [f"x0={first}", f"x0b={again}", f"x1={repeat}", f"y={other}", "--output", str(out), "--resamples", "200"]
    cmd += ["--reference", str(demo["release"].parent / "orspace-judgments" / "demo_answers.jsonl")]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(out.read_text())
    pairs = {(p["a"], p["b"]): p for p in doc["pairs"]}
    assert pairs["x0", "x1"]["kind"] == "repeat" and pairs["x0", "y"]["kind"] == "cross_judge"
    assert pairs["x0", "x1"]["criteria"]["c4"]["disagreement_rate"] == 1.0
    assert pairs["x0", "x0b"]["disagreements"] == []
    assert doc["reference"]["x0"]["criteria"]["all"]["disagreement_rate"] == 0.0
    assert doc["reference"]["y"]["criteria"]["c4"]["disagreement_rate"] == 1.0
    assert doc["review"] == [{"workspace_id": "or_space_101_explain", "criterion_id": "c4"}]
