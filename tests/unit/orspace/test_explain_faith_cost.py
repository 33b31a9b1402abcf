"""Explain: the unfaithful flag, the default penalty cap, judge tokens and cost, the judge budget."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

from tcsexam.orspace.explain import DEFAULT_PENALTY_SETTING, mean_label, score_explain
from tcsexam.orspace.judge import JudgeClient, JudgeSettings
from tcsexam.orspace.release import load_rubrics


def explain_cli(demo, output) -> list[str]:
    """`tcsexam orspace explain-score` of the demo's rubric and grounded answers."""
    rubrics = demo["release"] / "evaluation" / "explain_evaluation" / "rubrics.jsonl"
    answers = demo["workspaces"] / "answers.jsonl"
    return [sys.executable, "-m", "tcsexam", "orspace", "explain-score", "--rubrics", str(rubrics)] + [
        "--answers",
        str(answers),
        "--output",
        str(output),
    ]


def judgment(penalty=0.0):
    return {
        "criteria": {"c3": {"verdict": True, "justification": "j"}, "c4": {"verdict": True, "justification": "j"}},
        "reasoning": 30,
        "grounding": 18,
        "answer_quality": 9,
        "hallucination_penalty": penalty,
        "unsupported_claims": ["x"] if penalty else [],
    }


def reply(server, penalty=0.0, tokens=(1000, 200)):
    body = json.loads(server.chat(json.dumps(judgment(penalty))))
    body["usage"] = {"prompt_tokens": tokens[0], "completion_tokens": tokens[1], "total_tokens": sum(tokens)}
    return (200, {}, json.dumps(body).encode(), 0)


def judge(server, tmp_path, **kw) -> JudgeClient:
    settings = JudgeSettings(
        base_url=server.base_url, model="judge-x", max_attempts=1, backoff_s=0, cache_dir=tmp_path / "cache", **kw
    )
    return JudgeClient(settings, sleep=lambda s: None)


@pytest.fixture
def three(demo, tmp_path):
    """The demo rubric under three ids (each with the demo's grounded answer)."""
    (row,) = load_rubrics(demo["release"] / "evaluation" / "explain_evaluation" / "rubrics.jsonl").values()
    answer = json.loads((demo["workspaces"] / "answers.jsonl").read_text().splitlines()[0])["answer"]
    ids = [f"or_space_10{i}_explain" for i in (1, 2, 3)]
    return {w: {**row, "workspace_id": w, "question": f"{row['question']} ({w})"} for w in ids}, dict.fromkeys(
        ids, answer
    )


@pytest.mark.parametrize(
    ("answers_file", "penalty", "flag", "reasons"),
    [
        ("answers.jsonl", 0, False, []),
        ("answers.jsonl", 3, True, ["judge_penalty"]),
        ("answers_hallucinated.jsonl", 0, True, ["unmatched_numbers"]),
    ],
)
def test_unfaithful_flag(demo, tmp_path, judge_server, answers_file, penalty, flag, reasons):
    rubrics = load_rubrics(demo["release"] / "evaluation" / "explain_evaluation" / "rubrics.jsonl")
    answer = json.loads((demo["workspaces"] / answers_file).read_text().splitlines()[0])
    judge_server.script = [reply(judge_server, penalty)]
    d = score_explain(
        rubrics,
        {answer["workspace_id"]: answer["answer"]},
        judge=judge(judge_server, tmp_path),
        workspaces_root=demo["workspaces"],
    )
    row = d["rows"][0]
    assert row["unfaithful"] is flag and row["unfaithful_reasons"] == reasons
    assert d["unfaithful"] == int(flag)


def test_default_cap_is_the_papers_and_is_printed_with_every_mean(three, tmp_path, judge_server):
    assert DEFAULT_PENALTY_SETTING == "paper"
    judge_server.script = [reply(judge_server, penalty=30)]
    rubrics, answers = three
    d = score_explain(rubrics, answers, judge=judge(judge_server, tmp_path))
    assert d["penalty_cap"] == 12.0 and all(r["hallucination_penalty"] == 12.0 for r in d["rows"])
    assert d["mean_score_label"] == f"{d['mean_score']:.2f} (penalty cap 12, paper)"
    assert mean_label(None, "release", 20.0) == "n/a (penalty cap 20, release)"


def test_tokens_and_cost_per_judgment_and_in_total(three, tmp_path, judge_server):
    judge_server.script = [reply(judge_server, tokens=(2000, 500))]
    rubrics, answers = three
    d = score_explain(rubrics, answers, judge=judge(judge_server, tmp_path, prices=(3.0, 15.0)))
    per = 2000 / 1e6 * 3.0 + 500 / 1e6 * 15.0
    assert [r["judge_usage"]["cost"] for r in d["rows"]] == [pytest.approx(per)] * 3
    assert d["judge_cost"]["total_cost"] == pytest.approx(3 * per)
    assert d["judge_cost"]["input_tokens"] == 6000 and d["judge_cost"]["output_tokens"] == 1500
    # the cache keeps the tokens: a rerun reports the same total and spends nothing new
    again = score_explain(rubrics, answers, judge=judge(judge_server, tmp_path, prices=(3.0, 15.0)))
    assert len(judge_server.requests) == 3
    assert again["judge_cost"]["total_cost"] == pytest.approx(3 * per) and again["judge_cost"]["spent_this_run"] == 0
    # without prices: tokens, no cost
    plain = score_explain(rubrics, answers, judge=judge(judge_server, tmp_path / "other"))
    assert plain["rows"][0]["judge_usage"]["cost"] is None and plain["judge_cost"]["total_cost"] is None


def test_budget_stops_judging_keeps_judgments_and_a_rerun_continues(three, tmp_path, judge_server):
    judge_server.script = [reply(judge_server, tokens=(2000, 500))]
    rubrics, answers = three
    per = 2000 / 1e6 * 3.0 + 500 / 1e6 * 15.0  # 0.0135 USD
    d = score_explain(rubrics, answers, judge=judge(judge_server, tmp_path, prices=(3.0, 15.0), max_cost=0.03))
    assert [r["status"] for r in d["rows"]] == ["scored", "scored", "budget_stopped"]
    assert d["budget_stop"].startswith("or_space_103_explain: judge budget") and d["mean_score"] is None
    assert len(judge_server.requests) == 2 and d["judge_cost"]["spent_this_run"] == pytest.approx(2 * per)
    rerun = score_explain(rubrics, answers, judge=judge(judge_server, tmp_path, prices=(3.0, 15.0), max_cost=0.03))
    assert [r["status"] for r in rerun["rows"]] == ["scored"] * 3 and rerun["complete"]
    assert len(judge_server.requests) == 3  # only the one left was asked for


def test_cli_budget_line_and_usage_errors(demo, tmp_path, judge_server):
    judge_server.script = [reply(judge_server, tokens=(2000, 500))]
    prices = tmp_path / "prices.yaml"
    prices.write_text("judge-x: {input_per_mtok: 3.0, output_per_mtok: 15.0}\n")
    env = {"PATH": "/usr/bin:/bin", "TCSEXAM_JUDGE_BASE_URL": judge_server.base_url, "TCSEXAM_JUDGE_MODEL": "judge-x"}
    base = [*explain_cli(demo, tmp_path / "ex.json"), "--judge-prices", str(prices)]
    ok = subprocess.run([*base, "--judge-cache", str(tmp_path / "c")], capture_output=True, text=True, env=env)
    assert ok.returncode == 0, ok.stderr
    assert "(penalty cap 12, paper)" in ok.stdout and "judge cost 0.0135 USD" in ok.stdout
    stop = subprocess.run(
        [*base, "--judge-cache", str(tmp_path / "d"), "--max-judge-cost", "0.001"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert stop.returncode == 1 and len(stop.stderr.strip().splitlines()) == 1
    assert "judging stopped at or_space_101_explain: judge budget" in stop.stderr and "rerun to continue" in stop.stderr
    assert json.loads((tmp_path / "ex.json").read_text())["rows"][0]["status"] == "budget_stopped"
    no_cache = subprocess.run([*base, "--max-judge-cost", "1"], capture_output=True, text=True, env=env)
    assert no_cache.returncode == 2 and "--judge-cache" in no_cache.stderr


def test_explain_score_records_and_checks_the_condition(demo, tmp_path):
    base = [*explain_cli(demo, tmp_path / "ex.json"), "--no-judge"]
    ok = subprocess.run([*base, "--condition", "revise-all_flat_both"], capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    assert json.loads((tmp_path / "ex.json").read_text())["condition"] == "revise-all_flat_both"
    staged = tmp_path / "staged"
    shutil.copytree(
        demo["workspaces"] / "Workspace_OR" / "explain_workspaces" / "instance_101", staged / "or_space_101_explain"
    )
    (staged / "manifest.json").write_text(
        json.dumps({"condition": {"view": "revise-all", "interface": "filesystem", "context": "none"}})
    )
    bad = subprocess.run(
        [*base, "--workspaces", str(staged), "--condition", "revise-all_flat_both"], capture_output=True, text=True
    )
    assert bad.returncode == 1 and "staged under condition revise-all_filesystem_none" in bad.stderr


def test_cli_budget_line_counts_judgments_not_missing_answers(demo, tmp_path, judge_server):
    # three rubric rows, two answered: the budget allows one judgment; the missing answer is no judgment
    judge_server.script = [reply(judge_server, tokens=(2000, 500))]
    rubrics_file = demo["release"] / "evaluation" / "explain_evaluation" / "rubrics.jsonl"
    (row,) = load_rubrics(rubrics_file).values()
    answer = json.loads((demo["workspaces"] / "answers.jsonl").read_text().splitlines()[0])["answer"]
    ids = [f"or_space_10{i}_explain" for i in (1, 2, 3)]
    rubrics, answers = tmp_path / "rubrics.jsonl", tmp_path / "answers.jsonl"
    rubrics.write_text(
        "".join(json.dumps({**row, "workspace_id": w, "question": f"{row['question']} {w}"}) + "\n" for w in ids)
    )
    answers.write_text("".join(json.dumps({"workspace_id": w, "answer": answer}) + "\n" for w in ids[:2]))
    prices = tmp_path / "prices.yaml"
    prices.write_text("judge-x: {input_per_mtok: 3.0, output_per_mtok: 15.0}\n")
    env = {"PATH": "/usr/bin:/bin", "TCSEXAM_JUDGE_BASE_URL": judge_server.base_url, "TCSEXAM_JUDGE_MODEL": "judge-x"}
    stop = subprocess.run(
        [
            sys.executable,
            "-m",
            "tcsexam",
            "orspace",
            "explain-score",
            "--rubrics",
            str(rubrics),
            "--answers",
            str(answers),
            "--output",
            str(tmp_path / "ex.json"),
            "--judge-prices",
            str(prices),
            "--judge-cache",
            str(tmp_path / "c"),
            "--max-judge-cost",
            "0.02",
        ],
        capture_output=True,
        text=True,
        env=env,
    )
    assert stop.returncode == 1, stop.stderr
    assert "judging stopped at or_space_102_explain" in stop.stderr and "; 1 judgments kept" in stop.stderr
