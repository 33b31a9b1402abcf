"""A scripted `mockllm` agent works in the bundled OR-Space workspaces through the real sandbox
(list the files, read the requirements and the CSVs, write a model, run it, submit), then the
existing judges score what `tcsexam agents generate` wrote: Build and Revise pass by objective,
the Explain answer's exact-match units are found. A rerun asks the model nothing."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from agent_support import (  # noqa: E402
    ORACLE,
    RUBRICS,
    TOKENS_IN,
    TOKENS_OUT,
    ScriptedAgent,
    demo_answer,
    explain_steps,
    mock_config,
    program_steps,
    sandbox_config_or_skip,
    staged_demo,
    tool_outputs,
)

from tcsexam.agents.accounting import read_generation  # noqa: E402
from tcsexam.agents.generate import GenerationSettings, generate  # noqa: E402
from tcsexam.agents.tasks import AgentLimits  # noqa: E402
from tcsexam.cli import main  # noqa: E402

pytestmark = pytest.mark.slow
WORKSPACES = ["or_space_101_build", "or_space_102_build", "or_space_101_revise", "or_space_101_explain"]
SCRIPTS = {
    "or_space_101_build": program_steps("src", "bakery_highs.py"),
    "or_space_102_build": program_steps("src", "facility_pulp.py"),
    "or_space_101_revise": program_steps("revised/src", "bakery_exclusive_pulp.py"),
    "or_space_101_explain": explain_steps(demo_answer()),
}


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """The generation run (one invocation) and its scripted agent."""
    root = tmp_path_factory.mktemp("agents")
    config = sandbox_config_or_skip(call_time_s=60)
    staged = staged_demo(root, WORKSPACES)
    agent = ScriptedAgent(SCRIPTS)
    settings = GenerationSettings(
        staged=staged, output=root / "out", model=mock_config(), sandbox=config, limits=AgentLimits(message_limit=40)
    )
    summary = generate(settings, model=agent.model())
    return settings, agent, summary


def test_every_sample_finishes_submitted_with_its_accounting(run):
    settings, agent, summary = run
    assert summary["complete"] and summary["finished"] == 4, summary
    assert summary["stop_reasons"] == {"submitted": 4}
    record = read_generation(settings.output / "samples" / "or_space_101_build" / "generation.json")
    steps = len(SCRIPTS["or_space_101_build"])
    assert record.final and record.stop_reason == "submitted"
    assert (record.input_tokens, record.output_tokens) == (steps * TOKENS_IN, steps * TOKENS_OUT)
    assert record.tool_calls_by_name == {"bash": 3, "text_editor": 2, "submit": 1}
    assert record.model["model"] == "mockllm/model" and record.condition == "revise-all_filesystem_both"
    assert record.log_file and (settings.output / record.log_file).is_file()


def test_the_tools_ran_in_the_sandbox_and_the_transcript_shows_it(run):
    settings, _, _ = run
    outputs = tool_outputs(settings.output, "or_space_101_build")
    assert any("business_requirement.md" in o for o in outputs)  # ls -R
    assert any("OBJECTIVE_VALUE" in o or "Optimal" in o for o in outputs)  # the program ran
    # the worked workspace holds the program, and nothing of the sandbox's own
    program = settings.output / "workspaces" / "or_space_101_build" / "src" / "main.py"
    assert program.read_text().startswith(SCRIPTS["or_space_101_build"][3][1]["file_text"][:40])
    staged_manifest = json.loads((settings.staged / "manifest.json").read_text())
    assert json.loads((settings.output / "workspaces" / "manifest.json").read_text()) == staged_manifest


def test_the_judges_score_what_the_agent_left(run, tmp_path):
    settings, _, _ = run
    out = settings.output
    judged = tmp_path / "judged"
    assert (
        main(
            [
                "orspace",
                "execute",
                "--workspaces",
                str(out / "workspaces"),
                "--output-dir",
                str(judged),
                "--time-limit",
                "60",
            ]
        )
        == 0
    )
    objectives = tmp_path / "objectives.json"
    args = ["--release", str(ORACLE), "--predictions", str(judged / "predictions.jsonl"), "--output", str(objectives)]
    assert main(["orspace", "score-objectives", *args, "--workspaces", str(out / "workspaces")]) == 0
    rows = {r["workspace_id"]: r for r in json.loads(objectives.read_text())["rows"]}
    for wid in ("or_space_101_build", "or_space_102_build", "or_space_101_revise"):
        assert rows[wid]["passed"], rows[wid]
    explain = tmp_path / "explain.json"
    ex_args = [
        "--rubrics",
        str(RUBRICS),
        "--answers",
        str(out / "answers.jsonl"),
        "--workspaces",
        str(out / "workspaces"),
    ]
    assert main(["orspace", "explain-score", *ex_args, "--no-judge", "--output", str(explain)]) == 0
    row = json.loads(explain.read_text())["rows"][0]
    assert row["workspace_id"] == "or_space_101_explain" and row["answer_status"] == "given"
    # the exact-match units of the grounded answer are found, and every number it cites is evidence
    assert row["exact_match"] and all(u["satisfied"] for u in row["exact_match"]), row["exact_match"]
    assert row["evidence"]["matched"] and not row["evidence"]["unmatched"]


def test_a_rerun_asks_the_model_nothing_for_finished_samples(run):
    settings, _, _ = run
    again = ScriptedAgent(SCRIPTS)
    summary = generate(settings, model=again.model())
    assert again.calls == {} and summary["complete"] and summary["generated_now"] == 0


def test_another_model_into_the_same_output_is_refused(run):
    from tcsexam.agents.providers import ModelConfig
    from tcsexam.errors import InputError

    settings, _, _ = run
    other = GenerationSettings(
        staged=settings.staged,
        output=settings.output,
        model=ModelConfig(model="mockllm/other"),
        sandbox=settings.sandbox,
    )
    with pytest.raises(InputError, match="another generation run"):
        generate(other, model=ScriptedAgent(SCRIPTS).model())
