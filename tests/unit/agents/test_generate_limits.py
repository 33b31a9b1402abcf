"""A limit reached is the model's result, judged as what it left: a sample that runs out of
messages after writing its program, or out of time inside a long command, is finished (`final`)
with its limit as stop reason, and its workspace is what the judge runs; an Explain agent that
never submits is judged on the answer.md it left."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from agent_support import (  # noqa: E402
    ScriptedAgent,
    demo_answer,
    mock_config,
    program_steps,
    sandbox_config_or_skip,
    staged_demo,
)

from tcsexam.agents.accounting import read_generation  # noqa: E402
from tcsexam.agents.generate import GenerationSettings, generate  # noqa: E402
from tcsexam.agents.tasks import AgentLimits  # noqa: E402
from tcsexam.cli import main  # noqa: E402

pytestmark = pytest.mark.slow
BUILD, SLOW, EXPLAIN = "or_space_101_build", "or_space_102_build", "or_space_101_explain"


@pytest.fixture(scope="module")
def limited(tmp_path_factory):
    """Two runs: Build and Explain agents that run out of messages, and one that runs out of time
    (a 3 s sample limit) inside a command of its own that would take 10 minutes."""
    root = tmp_path_factory.mktemp("limits")
    config = sandbox_config_or_skip(call_time_s=600)
    writes = program_steps("src", "bakery_highs.py")[:4]  # list, read, read, write: then messages run out
    agent = ScriptedAgent(
        {
            BUILD: writes + [("bash", {"command": "echo still working"})],
            SLOW: [("bash", {"command": "sleep 600"})],
            EXPLAIN: [
                ("text_editor", {"command": "create", "path": "answer.md", "file_text": demo_answer()}),
                ("bash", {"command": "echo thinking"}),
            ],
        }
    )
    # 2 messages (system, user) + 2 per tool call: the Build agent makes its 4 calls and is stopped
    messages = GenerationSettings(
        staged=staged_demo(root / "messages", [BUILD, EXPLAIN]),
        output=root / "out-messages",
        model=mock_config(),
        sandbox=config,
        limits=AgentLimits(message_limit=2 + 2 * len(writes)),
    )
    time = GenerationSettings(
        staged=staged_demo(root / "time", [SLOW]),
        output=root / "out-time",
        model=mock_config(),
        sandbox=config,
        limits=AgentLimits(time_limit_s=3),
    )
    return {s.output: generate(s, model=agent.model()) for s in (messages, time)}


def _record(out: Path, wid: str):
    return read_generation(out / "samples" / wid / "generation.json")


def test_limits_end_the_samples_as_the_models_results(limited):
    assert all(summary["complete"] for summary in limited.values()), limited
    messages, time = limited
    stops = {BUILD: _record(messages, BUILD), EXPLAIN: _record(messages, EXPLAIN), SLOW: _record(time, SLOW)}
    assert stops[BUILD].stop_reason == "message_limit" and stops[EXPLAIN].stop_reason == "message_limit"
    assert stops[SLOW].stop_reason == "time_limit"
    assert all(r.final for r in stops.values())


def test_what_it_left_is_judged(limited, tmp_path):
    rows = {}
    for n, out in enumerate(limited):
        judged = tmp_path / f"judged{n}"
        assert main(["orspace", "execute", "--workspaces", str(out / "workspaces"), "--output-dir", str(judged)]) == 0
        rows.update(
            (r["workspace_id"], r) for r in map(json.loads, (judged / "predictions.jsonl").read_text().splitlines())
        )
    assert rows[BUILD]["status"] == "Optimal"  # the program it wrote before the limit
    assert rows[SLOW]["failure_mode"] == "missing_output"
    messages = next(iter(limited))
    answers = [json.loads(line) for line in (messages / "answers.jsonl").read_text().splitlines()]
    assert answers == [{"workspace_id": EXPLAIN, "answer": demo_answer()}]  # its answer.md


def test_a_sandbox_that_fails_is_infrastructure_and_the_rerun_completes(tmp_path, monkeypatch):
    from tcsexam.agents.sandboxenv import resolve_sandbox
    from tcsexam.runner.limiter import LaunchError

    config = sandbox_config_or_skip()
    staged = staged_demo(tmp_path, [BUILD])
    box = resolve_sandbox(config)[0]
    script = {BUILD: program_steps("src", "bakery_highs.py")}
    settings = GenerationSettings(
        staged=staged, output=tmp_path / "out", model=mock_config(), sandbox=config, retry_on_error=0
    )

    def broken(self, spec):
        raise LaunchError("the sandbox's set-up failed (scripted)", False)

    with monkeypatch.context() as patch:
        patch.setattr(type(box), "run", broken)
        summary = generate(settings, model=ScriptedAgent(script).model())
    record = read_generation(settings.output / "samples" / BUILD / "generation.json")
    assert record.stop_reason == "sandbox_error" and not record.final and "scripted" in record.stop_detail
    assert not summary["complete"] and not (settings.output / "workspaces" / BUILD).exists()
    again = ScriptedAgent(script)
    assert generate(settings, model=again.model())["complete"] and again.calls == {BUILD: len(script[BUILD])}
