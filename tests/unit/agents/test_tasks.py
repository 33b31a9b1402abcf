"""The Inspect tasks over a staged folder: one sample per staged workspace of the mode, with the
metadata the sandbox and the records read, the mode's instructions, and finished samples left out."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from agent_support import staged_demo  # noqa: E402

from tcsexam.agents.sandboxenv import SANDBOX_TYPE, AgentSandboxConfig  # noqa: E402
from tcsexam.agents.tasks import NO_QUESTION, AgentLimits, explain_question, orspace_task  # noqa: E402
from tcsexam.errors import InputError  # noqa: E402

WIDS = ["or_space_101_build", "or_space_102_build", "or_space_101_revise", "or_space_101_explain"]


@pytest.fixture(scope="module")
def staged(tmp_path_factory):
    return {i: staged_demo(tmp_path_factory.mktemp(i), WIDS, interface=i) for i in ("filesystem", "flat")}


def test_one_sample_per_staged_workspace_of_the_mode(staged, tmp_path):
    task = orspace_task(staged["filesystem"], "build", output=tmp_path, config=AgentSandboxConfig())
    assert [s.id for s in task.dataset] == ["or_space_101_build", "or_space_102_build"]
    meta = task.dataset[0].metadata
    assert meta["mode"] == "build" and meta["interface"] == "filesystem"
    assert meta["condition"] == "revise-all_filesystem_both"
    assert meta["program_time_limit_s"] == AgentLimits().program_time_limit_s
    assert meta["staged_dir"] == str(staged["filesystem"].resolve())
    assert meta["incoming_dir"] == str((tmp_path / ".incoming" / "or_space_101_build").resolve())
    assert task.sandbox.type == SANDBOX_TYPE and task.message_limit == AgentLimits().message_limit


def test_the_prompts_name_the_workspace_its_folder_and_limits(staged, tmp_path):
    limits = AgentLimits(program_time_limit_s=42)
    config = AgentSandboxConfig(call_time_s=7)
    revise = orspace_task(staged["filesystem"], "revise", output=tmp_path, config=config, limits=limits)
    text = revise.dataset[0].input
    assert "Workspace or_space_101_revise" in text and "revised/src/" in text and "42 s" in text and "7 s" in text
    explain = orspace_task(staged["filesystem"], "explain", output=tmp_path, config=config)
    question = json.loads((staged["filesystem"] / "or_space_101_explain" / "metadata.json").read_text())
    assert question["explain_task"]["question"] in explain.dataset[0].input


def test_the_flat_interface_gives_the_staged_prompt_and_never_a_command(staged, tmp_path):
    limits = AgentLimits(program_time_limit_s=42)
    config = AgentSandboxConfig(sandbox="bwrap")
    task = orspace_task(staged["flat"], "build", output=tmp_path, config=config, limits=limits)
    prompt = (staged["flat"] / "prompts" / "or_space_101_build.txt").read_text()
    assert task.dataset[0].metadata["program_time_limit_s"] == 42  # flat_solver tells the model
    assert task.dataset[0].input == prompt
    assert task.sandbox.config.sandbox == "local"  # used only for the workspace copy: no tools


def test_finished_samples_are_left_out_and_none_left_is_no_task(staged, tmp_path):
    fs = staged["filesystem"]
    task = orspace_task(
        fs, "build", output=tmp_path, config=AgentSandboxConfig(), skip=frozenset({"or_space_101_build"})
    )
    assert [s.id for s in task.dataset] == ["or_space_102_build"]
    assert orspace_task(fs, "explain", output=tmp_path, config=AgentSandboxConfig(), skip=frozenset(WIDS)) is None
    with pytest.raises(InputError, match="unknown mode"):
        orspace_task(fs, "solve", output=tmp_path, config=AgentSandboxConfig())


def test_a_workspace_without_a_question_sends_the_agent_to_find_it(tmp_path):
    (tmp_path / "metadata.json").write_text('{"explain_task": {}}')
    assert explain_question(tmp_path) == NO_QUESTION
    assert explain_question(tmp_path / "absent") == NO_QUESTION
