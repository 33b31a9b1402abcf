"""Helpers of the agent tests: a staged copy of the bundled OR-Space demo with empty submission
folders, a scripted `mockllm` model that makes real tool calls per workspace, and the project
sandbox or a skip."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from inspect_ai.model import ModelOutput, ModelUsage, get_model

from tcsexam.agents.providers import ModelConfig
from tcsexam.agents.sandboxenv import AgentSandboxConfig, resolve_sandbox
from tcsexam.errors import InputError
from tcsexam.orspace.conditions import Condition
from tcsexam.orspace.stage import stage

REPO = Path(__file__).resolve().parents[3]
DEMO = REPO / "solvers" / "orspace-demo"
ORACLE = REPO / "references" / "orspace"
PROGRAMS = DEMO / "tools" / "programs"
RUBRICS = ORACLE / "evaluation" / "explain_evaluation" / "rubrics.jsonl"
#: every scripted reply reports these tokens (mockllm would count them with tiktoken, which
#: downloads its encoding)
TOKENS_IN, TOKENS_OUT = 120, 30
#: how the filesystem agent's prompt ("Workspace or_space_...") and the flat prompt's header
#: ("# OR-Space workspace or_space_...") name the workspace
WORKSPACE_LINE = re.compile(r"[Ww]orkspace (or_space_\d+_(?:build|revise|explain))\b")

Step = tuple[str, dict]  #: (tool name, arguments)


def sandbox_config_or_skip(**options) -> AgentSandboxConfig:
    """The `auto` sandbox config, skipped where no sandbox for untrusted code works here."""
    config = AgentSandboxConfig(**options)
    try:
        resolve_sandbox(config)
    except InputError as exc:
        pytest.skip(f"no project sandbox here: {exc}")
    return config


def empty_release(root: Path) -> Path:
    """A copy of the demo release whose Build `src/` and Revise `revised/src/` are empty (the
    demo ships sample submissions there): what an agent is given."""
    release = root / "release"
    shutil.copytree(DEMO / "Workspace_OR", release / "Workspace_OR")
    for folder in [
        *release.glob("Workspace_OR/build_workspaces/*/src"),
        *release.glob("Workspace_OR/revise_workspaces/*/revised/src"),
    ]:
        shutil.rmtree(folder)
        folder.mkdir()
    return release


def staged_demo(root: Path, workspaces: list[str], interface: str = "filesystem") -> Path:
    """The demo workspaces `workspaces` staged (leakage audit against the demo oracle)."""
    out = root / f"staged-{interface}"
    stage(
        empty_release(root),
        out,
        workspace_ids=workspaces,
        condition=Condition(interface=interface),
        oracle_root=ORACLE,
    )
    return out


def reply(tool: str, arguments: dict) -> ModelOutput:
    output = ModelOutput.for_tool_call("mockllm/model", tool, arguments)
    output.usage = ModelUsage(input_tokens=TOKENS_IN, output_tokens=TOKENS_OUT, total_tokens=TOKENS_IN + TOKENS_OUT)
    return output


def text_reply(text: str) -> ModelOutput:
    """A plain reply (the flat interface's)."""
    output = ModelOutput.from_content("mockllm/model", text)
    output.usage = ModelUsage(input_tokens=TOKENS_IN, output_tokens=TOKENS_OUT, total_tokens=TOKENS_IN + TOKENS_OUT)
    return output


def program_steps(folder: str, program: str) -> list[Step]:
    """List the files, read the requirements and the CSVs, write the model, run it, submit."""
    root = "" if folder == "src" else "revised/"
    return [
        ("bash", {"command": "ls -R"}),
        ("text_editor", {"command": "view", "path": f"{root}docs/business_requirement.md"}),
        ("bash", {"command": f"head -n 20 {root}data/*.csv"}),
        (
            "text_editor",
            {"command": "create", "path": f"{folder}/main.py", "file_text": (PROGRAMS / program).read_text()},
        ),
        ("bash", {"command": f'cd {folder} && python3 main.py && cat "$ORSPACE_RESULT_FILE" 2>/dev/null; true'}),
        ("submit", {"answer": f"{folder}/main.py solves the model"}),
    ]


def explain_steps(answer: str) -> list[Step]:
    return [
        ("bash", {"command": "ls -R && cat metadata.json"}),
        ("bash", {"command": "cat original/solver_records/*.json revised/solver_records/*.json"}),
        ("python", {"code": "import json; print(json.load(open('original/solver_records/slacks.json')))"}),
        ("text_editor", {"command": "create", "path": "answer.md", "file_text": answer}),
        ("submit", {"answer": answer}),
    ]


def demo_answer() -> str:
    return json.loads((DEMO / "answers.jsonl").read_text().splitlines()[0])["answer"]


class ScriptedAgent:
    """A `mockllm` output function: the next step of the script of the workspace the sample's
    prompt names (so samples may run concurrently), counting every call (`calls`)."""

    def __init__(self, scripts: dict[str, list[Step | ModelOutput]]):
        self.scripts = scripts
        self.calls: dict[str, int] = {}

    def __call__(self, messages, tools, tool_choice, config) -> ModelOutput:
        text = " ".join(m.text for m in messages if m.role in ("system", "user"))
        found = WORKSPACE_LINE.search(text)
        wid = found.group(1) if found else "?"
        step = sum(1 for m in messages if m.role == "assistant")
        self.calls[wid] = self.calls.get(wid, 0) + 1
        script = self.scripts[wid]
        chosen = script[min(step, len(script) - 1)]
        return chosen if isinstance(chosen, ModelOutput) else reply(*chosen)

    def model(self):
        return get_model("mockllm/model", custom_outputs=self, memoize=False)


def mock_config() -> ModelConfig:
    return ModelConfig(model="mockllm/model")


def transcript(out: Path, wid: str) -> list[tuple[str, str]]:
    """(role, text) of every message of `wid`'s sample in the run's .eval logs (its last try)."""
    from inspect_ai.log import read_eval_log

    found: list[tuple[str, str]] = []
    for path in sorted((out / "logs").glob("*.eval")):
        log = read_eval_log(str(path))
        for sample in log.samples or []:
            if sample.id == wid:  # a tool's error (ToolError) is what the model read
                found = [
                    (m.role, m.text + (f"[error] {m.error.message}" if getattr(m, "error", None) else ""))
                    for m in sample.messages
                ]
    return found


def tool_outputs(out: Path, wid: str) -> list[str]:
    return [text for role, text in transcript(out, wid) if role == "tool"]


RunJudge = Callable[[list[str]], int]


def scripted_endpoint_args(server) -> list[str]:
    """The flags of an `agents` command against a scripted OpenAI-compatible server
    (`openai_server.ScriptedOpenAI`): one sample at a time, no retries, a minute per call."""
    return [
        "--model",
        "scripted",
        "--base-url",
        server.base_url,
        "--max-samples",
        "1",
        "--max-retries",
        "0",
        "--retry-on-error",
        "0",
        "--call-time-limit",
        "60",
    ]
