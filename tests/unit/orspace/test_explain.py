"""explain-score: units, formula, penalty setting, judge errors, evidence check; via the CLI with
a real judge endpoint on 127.0.0.1."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tcsexam.orspace.evidence import check_numbers, evidence_numbers
from tcsexam.orspace.explain import combine
from tcsexam.orspace.judge_prompt import PROMPT_SHA256


def judgment(c3=True, c4=False, penalty=5):
    return {
        "criteria": {"c3": {"verdict": c3, "justification": "j"}, "c4": {"verdict": c4, "justification": "j"}},
        "reasoning": 30,
        "grounding": 18,
        "answer_quality": 9,
        "hallucination_penalty": penalty,
        "unsupported_claims": [],
    }


def run_cli(demo, tmp_path, server, *extra, answers="answers.jsonl"):
    out = tmp_path / "ex.json"
    env = {"PATH": "/usr/bin:/bin", "TCSEXAM_JUDGE_BASE_URL": server.base_url, "TCSEXAM_JUDGE_MODEL": "judge-x"}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "tcsexam",
            "orspace",
            "explain-score",
            "--rubrics",
            str(demo["release"] / "evaluation" / "explain_evaluation" / "rubrics.jsonl"),
            "--answers",
            str(demo["workspaces"] / answers),
            "--workspaces",
            str(demo["workspaces"]),
            "--output",
            str(out),
            "--judge-attempts",
            "2",
            *extra,
        ],
        capture_output=True,
        text=True,
        env=env,
    )
    return proc, out


def test_scores_with_the_judge(demo, tmp_path, judge_server):
    judge_server.script = [(200, {}, judge_server.chat(json.dumps(judgment(penalty=15))), 0)]
    proc, out = run_cli(demo, tmp_path, judge_server, "--penalty-setting", "paper")
    assert proc.returncode == 0, proc.stderr
    d = json.loads(out.read_text())
    row = d["rows"][0]
    # 9 units: 4 + 3 exact-match entities and 2 semantic criteria (c3 true, c4 false)
    em = sum(u["satisfied"] for u in row["exact_match"])
    assert row["units_total"] == 9 and row["units_satisfied"] == em + 1
    assert row["hallucination_penalty"] == 12.0 and row["hallucination_penalty_raw"] == 15.0  # paper cap
    expected = 35 * (em + 1) / 9 + 30 + 18 + 9 - 12
    assert row["score"] == pytest.approx(min(100.0, expected))
    assert d["penalty_setting"] == "paper" and d["penalty_cap"] == 12.0
    assert row["judge_model"] == "judge-x" and row["prompt_sha256"] == PROMPT_SHA256 == d["prompt_sha256"]
    assert d["complete"] and d["mean_score"] == row["score"]
    sent = json.loads(judge_server.requests[0]["body"]["messages"][1]["content"])
    assert [c["criterion_id"] for c in sent["criteria"]] == ["c3", "c4"] and sent["penalty_cap"] == 12.0


def test_judge_failure_is_an_error_not_a_zero(demo, tmp_path, judge_server):
    judge_server.script = [(200, {}, judge_server.chat('{"criteria": {}}'), 0)]
    proc, out = run_cli(demo, tmp_path, judge_server)
    assert proc.returncode == 1 and "judge error" in proc.stderr
    d = json.loads(out.read_text())
    assert d["complete"] is False and d["mean_score"] is None
    assert d["rows"][0]["status"] == "judge_error" and d["rows"][0]["score"] is None


def test_evidence_flags_the_invented_number(demo, tmp_path, judge_server):
    judge_server.script = [(200, {}, judge_server.chat(json.dumps(judgment(c3=False))), 0)]
    proc, out = run_cli(demo, tmp_path, judge_server, answers="answers_hallucinated.jsonl")
    assert proc.returncode == 0, proc.stderr
    row = json.loads(out.read_text())["rows"][0]
    assert row["evidence"]["unmatched"] == ["17.5"]


def test_no_judge_mode_and_missing_endpoint(demo, tmp_path, judge_server):
    proc, out = run_cli(demo, tmp_path, judge_server, "--no-judge")
    assert proc.returncode == 0 and judge_server.requests == []
    row = json.loads(out.read_text())["rows"][0]
    assert row["status"] == "not_judged" and row["score"] is None
    env_less = subprocess.run(
        [
            sys.executable,
            "-m",
            "tcsexam",
            "orspace",
            "explain-score",
            "--rubrics",
            str(demo["release"] / "evaluation" / "explain_evaluation" / "rubrics.jsonl"),
            "--answers",
            str(demo["workspaces"] / "answers.jsonl"),
            "--output",
            str(tmp_path / "n.json"),
        ],
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin"},
    )
    assert env_less.returncode == 2 and "TCSEXAM_JUDGE_BASE_URL" in env_less.stderr
    assert not (tmp_path / "n.json").exists()


def test_combine_clips():
    assert (
        combine(
            1.0, {**judgment(), "reasoning": 35, "grounding": 20, "answer_quality": 10, "hallucination_penalty": 0}, 20
        )[0]
        == 100.0
    )
    assert combine(
        0.0, {**judgment(), "reasoning": 0, "grounding": 0, "answer_quality": 0, "hallucination_penalty": 20}, 20
    ) == (0.0, 20.0)


def test_evidence_check(tmp_path):
    (tmp_path / "log.txt").write_text("objective 263,280.0 and 219384 ; x_B3_I = 571.4285714285714; dual -0.6")
    ev = evidence_numbers(tmp_path)
    r = check_numbers(
        "Cost rises from 219,384 to 263280 (+43896); x is 571.43, dual 0.6; week 2; 99999 invented; bII_7", ev
    )
    assert r["matched"] == ["219384", "263280", "571.43", "0.6"]
    assert r["derived"] == [{"number": "+43896", "as": "263280 - 219384"}]
    assert r["unmatched"] == ["99999"] and r["trivial_skipped"] == 1


def test_release_rubrics_missing_answers_score_zero(release, tmp_path):
    from tcsexam.orspace.explain import score_explain
    from tcsexam.orspace.release import load_rubrics

    rubrics = load_rubrics(release / "evaluation" / "explain_evaluation" / "rubrics.jsonl")
    d = score_explain(rubrics, {}, judge=None)
    assert d["n"] == 90 and all(r["answer_status"] == "missing" and r["score"] == 0.0 for r in d["rows"])


def test_bad_rubric_rows_name_the_line_and_id(tmp_path):
    from tcsexam.errors import InputError
    from tcsexam.orspace.release import load_rubrics

    good = {
        "workspace_id": "or_space_001_explain",
        "question": "q",
        "expected_short_answer": "a",
        "checklist": [
            {"criterion_id": "c1", "checklist_type": "exact_match", "criterion": "x", "target_entities": ["A"]}
        ],
    }
    path = tmp_path / "rubrics.jsonl"
    bad_type = dict(
        good,
        workspace_id="or_space_002_explain",
        checklist=[{"criterion_id": "c1", "checklist_type": "fuzzy", "criterion": "x"}],
    )
    path.write_text(json.dumps(good) + "\n" + json.dumps(bad_type) + "\n")
    with pytest.raises(InputError, match=r"line 2: or_space_002_explain: checklist/0/checklist_type"):
        load_rubrics(path)
    no_entities = dict(good, checklist=[{"criterion_id": "c1", "checklist_type": "exact_match", "criterion": "x"}])
    path.write_text(json.dumps(no_entities) + "\n")
    with pytest.raises(InputError, match="exact-match criterion c1 has no target_entities"):
        load_rubrics(path)
    path.write_text(json.dumps(good) + "\n" + json.dumps(good) + "\n")
    with pytest.raises(InputError, match="line 2: duplicate workspace id or_space_001_explain"):
        load_rubrics(path)
