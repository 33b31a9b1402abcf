"""A second judge in one explain-score call: both judgments kept per row, the first judge's score
used, the agreement computed by judge_agreement's own code, the disagreements listed; a second
judge's failure is named and leaves the first judge's scores standing. Against the scripted
OpenAI-compatible server (tests/unit/agents/openai_server.py), routed by the judge model."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tcsexam.orspace.explain import load_answers, score_explain
from tcsexam.orspace.judge import JudgeClient, JudgeSettings
from tcsexam.orspace.judge_agreement import judge_agreement, word_counts
from tcsexam.orspace.release import load_rubrics

sys.path.insert(0, str(Path(__file__).parents[1] / "agents"))
from openai_server import Entry, ScriptedOpenAI, completion, error  # noqa: E402

#: answer marker -> (c3, c4) verdict of each judge
VERDICTS = {
    "first": {"A1": (True, True), "A2": (True, False), "A3": (False, False)},
    "second": {"A1": (True, True), "A2": (False, False), "A3": (False, True)},
}
SCORES = {"first": (30, 18, 9, 0), "second": (20, 10, 5, 3)}  # reasoning, grounding, quality, penalty


def judgment(judge: str, marker: str) -> dict:
    c3, c4 = VERDICTS[judge][marker]
    reasoning, grounding, quality, penalty = SCORES[judge]
    return {
        "criteria": {"c3": {"verdict": c3, "justification": "j"}, "c4": {"verdict": c4, "justification": "j"}},
        "reasoning": reasoning,
        "grounding": grounding,
        "answer_quality": quality,
        "hallucination_penalty": penalty,
        "unsupported_claims": [],
    }


def router(fail: set[tuple[str, str]] = frozenset()):
    """Answer each request with its judge's verdicts on the answer's marker (HTTP 500 for `fail`)."""

    def route(body: dict) -> Entry:
        judge = "first" if body["model"] == "judge-a" else "second"
        marker = json.loads(body["messages"][1]["content"])["answer"].split()[0]
        if (judge, marker) in fail:
            return error(500, "provider down")
        return completion(json.dumps(judgment(judge, marker)))

    return route


@pytest.fixture
def explain(demo, tmp_path) -> tuple[Path, Path]:
    """Rubrics of four items (the demo's rubric under four ids) and answers to three of them."""
    release = tmp_path / "release"
    shutil.copytree(demo["release"], release)
    path = release / "evaluation" / "explain_evaluation" / "rubrics.jsonl"
    row = json.loads(path.read_text().splitlines()[0])
    ids = [f"or_space_{n}_explain" for n in (101, 102, 103, 104)]
    path.write_text("".join(json.dumps({**row, "workspace_id": wid}) + "\n" for wid in ids))
    answers = tmp_path / "answers.jsonl"
    words = {"A1": "labour binds", "A2": "labour binds at 13.75 per hour, the oven has slack", "A3": "no idea"}
    answers.write_text(
        "".join(
            json.dumps({"workspace_id": wid, "answer": f"{marker} {words[marker]}"}) + "\n"
            for wid, marker in zip(ids, words, strict=False)
        )
    )
    return path, answers


def client(server: ScriptedOpenAI, model: str) -> JudgeClient:
    settings = JudgeSettings(base_url=server.base_url, model=model, api_key="k", max_attempts=2, backoff_s=0.0)
    return JudgeClient(settings, sleep=lambda s: None)


def test_both_judges_kept_first_scores_agreement_reused(explain):
    rubrics_path, answers_path = explain
    rubrics = load_rubrics(rubrics_path)
    answers = load_answers(answers_path, set(rubrics))
    with ScriptedOpenAI(route=router()) as server:
        only_first = score_explain(rubrics, answers, judge=client(server, "judge-a"))
        both = score_explain(rubrics, answers, judge=client(server, "judge-a"), second_judge=client(server, "judge-b"))
        assert server.count == 3 + 3 + 3  # the missing answer is judged by neither
    rows = {r["workspace_id"]: r for r in both["rows"]}
    # the first judge's scores are the scores, unchanged by the second
    assert [r["score"] for r in both["rows"]] == [r["score"] for r in only_first["rows"]]
    assert both["mean_score"] == only_first["mean_score"] and both["complete"]
    second = rows["or_space_102_explain"]["second_judge"]
    assert second["model"] == "judge-b" and second["status"] == "scored"
    assert {c: v["verdict"] for c, v in second["criteria"].items()} == {"c3": False, "c4": False}
    assert second["reasoning"] == 20.0 and second["hallucination_penalty"] == 3.0
    assert second["disagrees_on"] == ["c3"] and rows["or_space_101_explain"]["second_judge"]["disagrees_on"] == []
    assert second["score"] < rows["or_space_102_explain"]["score"]
    assert rows["or_space_104_explain"]["second_judge"] is None  # no answer
    assert both["second_judge_model"] == "judge-b" and both["second_judge_errors"] == []
    # the agreement is judge-agreement's document of the two sets
    pair = both["judge_agreement"]["pairs"][0]
    assert (pair["a"], pair["b"], pair["kind"]) == ("primary", "second", "cross_judge")
    pooled = pair["criteria"]["all"]
    assert pooled["n"] == 6 and pooled["disagreement_rate"] == pytest.approx(2 / 6)
    assert pooled["kappa"] == pytest.approx(1 / 3)  # observed 4/6, expected 1/2
    assert pair["criteria"]["c3"]["n"] == 3 and pair["criteria"]["c4"]["disagreement_rate"] == pytest.approx(1 / 3)
    assert both["judge_disagreements"] == [
        {"workspace_id": "or_space_102_explain", "criterion_id": "c3"},
        {"workspace_id": "or_space_103_explain", "criterion_id": "c4"},
    ]
    second_set = {
        "judge_model": "judge-b",
        "rows": [
            {"workspace_id": w, "criteria": r["second_judge"]["criteria"], "score": r["second_judge"]["score"]}
            for w, r in rows.items()
            if r["second_judge"]
        ],
    }
    again = judge_agreement({"primary": only_first, "second": second_set}, words=word_counts(answers))
    assert again["pairs"] == both["judge_agreement"]["pairs"]
    assert both["judge_agreement"]["length_slope"]["primary"]["n"] == 3  # given answers only


def test_a_second_judge_failure_is_named_and_the_first_scores_stand(explain):
    rubrics_path, answers_path = explain
    rubrics = load_rubrics(rubrics_path)
    answers = load_answers(answers_path, set(rubrics))
    with ScriptedOpenAI(route=router(fail={("second", "A2")})) as server:
        summary = score_explain(
            rubrics, answers, judge=client(server, "judge-a"), second_judge=client(server, "judge-b")
        )
    rows = {r["workspace_id"]: r for r in summary["rows"]}
    failed = rows["or_space_102_explain"]
    assert failed["status"] == "scored" and failed["score"] is not None
    assert failed["second_judge"]["status"] == "judge_error" and "HTTP 500" in failed["second_judge"]["error"]
    assert summary["complete"] and summary["mean_score"] is not None
    assert summary["second_judge_errors"] == ["or_space_102_explain"]
    assert summary["second_judge_mean_score"] is None  # incomplete
    assert summary["judge_agreement"]["pairs"][0]["criteria"]["all"]["n"] == 4  # items both judged
    assert summary["judge_disagreements"] == [{"workspace_id": "or_space_103_explain", "criterion_id": "c4"}]


def test_explain_score_cli_with_a_second_judge(explain, tmp_path):
    rubrics_path, answers_path = explain
    out = tmp_path / "explain.json"
    args = [sys.executable, "-m", "tcsexam", "orspace", "explain-score", "--rubrics", str(rubrics_path)]
    args += ["--answers", str(answers_path), "--output", str(out), "--judge-attempts", "1"]
    args += ["--judge-cache", str(tmp_path / "cache"), "--second-judge-model", "judge-b"]
    with ScriptedOpenAI(route=router(fail={("second", "A3")})) as server:
        env = {**os.environ, "TCSEXAM_JUDGE_BASE_URL": server.base_url, "TCSEXAM_JUDGE_MODEL": "judge-a"}
        env["TCSEXAM_SECOND_JUDGE_API_KEY"] = "second-key"
        proc = subprocess.run(args, capture_output=True, text=True, env=env, timeout=300)
        keys = {r["body"]["model"]: r["headers"]["authorization"] for r in server.requests}
    assert proc.returncode == 1, proc.stderr
    assert "1 second judge error(s), first or_space_103_explain" in proc.stderr
    assert keys["judge-b"] == "Bearer second-key"
    doc = json.loads(out.read_text())
    assert doc["second_judge_model"] == "judge-b" and doc["mean_score"] is not None
    # the rerun asks the second judge about the failed item only (the rest is cached)
    with ScriptedOpenAI(route=router()) as server:
        env["TCSEXAM_JUDGE_BASE_URL"] = server.base_url
        proc = subprocess.run(args, capture_output=True, text=True, env=env, timeout=300)
        assert server.count == 1
    assert proc.returncode == 0, proc.stderr
    assert (
        "second judge judge-b: kappa 0.333" in proc.stdout and "2 (workspace, criterion) pairs to review" in proc.stdout
    )
    no_judge = subprocess.run([*args, "--no-judge"], capture_output=True, text=True, env=env, timeout=300)
    assert no_judge.returncode == 2 and "--second-judge-model needs the judge" in no_judge.stderr
