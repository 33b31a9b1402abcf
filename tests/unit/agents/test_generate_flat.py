"""The flat interface end to end: a scripted model answers the staged `orspace-flat-v1` prompts in
the reply format, `tcsexam agents generate` parses the replies into the workspaces, and the
existing judges score them; a reply in a broken format is recorded as a parse error (the model's
result: nothing was written), never silently empty."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from agent_support import (  # noqa: E402
    ORACLE,
    PROGRAMS,
    RUBRICS,
    ScriptedAgent,
    demo_answer,
    mock_config,
    sandbox_config_or_skip,
    staged_demo,
    text_reply,
)

from tcsexam.agents.accounting import read_generation  # noqa: E402
from tcsexam.agents.generate import GenerationSettings, generate  # noqa: E402
from tcsexam.cli import main  # noqa: E402

pytestmark = pytest.mark.slow
GOOD, BROKEN, EXPLAIN = "or_space_101_build", "or_space_102_build", "or_space_101_explain"


def file_block(path: str, text: str) -> str:
    return f"Here is my program.\n<<<FILE {path}>>>\n{text}<<<END {path}>>>\n"


@pytest.fixture(scope="module")
def flat_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("flat")
    config = sandbox_config_or_skip()
    staged = staged_demo(root, [GOOD, BROKEN, EXPLAIN], interface="flat")
    agent = ScriptedAgent(
        {
            GOOD: [text_reply(file_block("src/main.py", (PROGRAMS / "bakery_highs.py").read_text()))],
            BROKEN: [text_reply("```python\nimport pulp\n# the model, without any file block\n```")],
            EXPLAIN: [text_reply(f"<<<ANSWER>>>\n{demo_answer()}\n<<<END ANSWER>>>\n")],
        }
    )
    settings = GenerationSettings(staged=staged, output=root / "out", model=mock_config(), sandbox=config)
    return settings, agent, generate(settings, model=agent.model())


def test_each_sample_asks_once_and_records_how_its_reply_parsed(flat_run):
    settings, agent, summary = flat_run
    assert agent.calls == {GOOD: 1, BROKEN: 1, EXPLAIN: 1}
    assert summary["complete"] and summary["stop_reasons"] == {"answered": 2, "parse_error": 1}
    broken = read_generation(settings.output / "samples" / BROKEN / "generation.json")
    assert broken.final and broken.stop_reason == "parse_error" and broken.stop_detail
    assert list((settings.output / "workspaces" / BROKEN / "src").iterdir()) == []
    assert read_generation(settings.output / "samples" / GOOD / "generation.json").interface == "flat"


def test_the_judges_score_the_parsed_replies(flat_run, tmp_path):
    settings, _, _ = flat_run
    out = settings.output
    judged = tmp_path / "judged"
    execute = ["orspace", "execute", "--workspaces", str(out / "workspaces"), "--output-dir", str(judged)]
    assert main([*execute, "--time-limit", "60"]) == 0
    predictions = {
        r["workspace_id"]: r for r in map(json.loads, (judged / "predictions.jsonl").read_text().splitlines())
    }
    assert predictions[BROKEN]["failure_mode"] == "missing_output"  # what it left: nothing
    assert predictions[GOOD]["condition"] == "revise-all_flat_both"
    objectives = tmp_path / "objectives.json"
    scored = ["--release", str(ORACLE), "--predictions", str(judged / "predictions.jsonl"), "--output", str(objectives)]
    assert main(["orspace", "score-objectives", *scored]) == 0
    rows = {r["workspace_id"]: r for r in json.loads(objectives.read_text())["rows"]}
    assert rows[GOOD]["passed"] and not rows[BROKEN]["passed"]
    explain = tmp_path / "explain.json"
    ex = ["--rubrics", str(RUBRICS), "--answers", str(out / "answers.jsonl"), "--workspaces", str(out / "workspaces")]
    assert main(["orspace", "explain-score", *ex, "--no-judge", "--output", str(explain)]) == 0
    row = json.loads(explain.read_text())["rows"][0]
    assert row["answer_status"] == "given" and all(u["satisfied"] for u in row["exact_match"])
