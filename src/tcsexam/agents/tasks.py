"""Inspect tasks over a staged folder: one task per OR-Space mode, one sample per staged workspace.

The staged folder's manifest (`tcsexam orspace stage`) says the condition (view x interface x
context). Per sample (`Sample.id` = the workspace id), metadata `workspace_id`, `mode`,
`condition`, `interface`, `program_time_limit_s` (the judge's limit, told to the model), `staged_dir` (what `sandboxenv` copies the workspace from: only its
audited files), `incoming_dir` (where the worked workspace is copied when the sample ends) and,
set once the sample's sandbox is up (`workspace_dir_solver`), `workspace_dir` (the host path of
the sample's workspace copy).

- filesystem interface: Inspect's ReAct agent with `tools.workspace_tools()` (bash, python,
  text_editor) and `tools.submit_tool()`, prompted with the mode's instructions (`instructions`);
  every call runs in the `tcsexam` sandbox environment (`sandboxenv`).
- flat interface: the staged `orspace-flat-v1` prompt (`<staged>/prompts/<id>.txt`) as the input
  and `agents.flat.flat_solver()` (one reply, parsed into `workspace_dir`; no tools, so no
  command ever runs and the sandbox is `local`, used only for the workspace copy).

Per-sample limits (`AgentLimits`): messages, tokens, wall-clock and working time, as Inspect
enforces them; a limit reached ends the sample as the model's result.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict

from inspect_ai import Task
from inspect_ai.agent import AgentPrompt, AgentSubmit, as_solver, react
from inspect_ai.dataset import Sample
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import SandboxEnvironmentSpec

from tcsexam.agents.flat import flat_solver
from tcsexam.agents.sandboxenv import SANDBOX_TYPE, AgentSandboxConfig, current_workspace
from tcsexam.agents.tools import submit_tool, workspace_tools
from tcsexam.agents.workspace import stage_manifest
from tcsexam.errors import InputError
from tcsexam.fileio import JsonObject, read_text
from tcsexam.orspace.conditions import Condition, Interface
from tcsexam.orspace.execute import DEFAULT_TIME_LIMIT_S
from tcsexam.orspace.release import MODES, Mode

#: the file an Explain agent keeps its answer in as it goes (what it left, when it never submits)
ANSWER_FILE = "answer.md"

_RESULT = (
    "Report the result in one of two ways: write one JSON object "
    '{{"status": "Optimal", "objective": <number>}} to the file named by the environment variable '
    "ORSPACE_RESULT_FILE (helpers: `from tcsexam.orspace.result import pulp_result, highs_result, "
    "write_result`), or print the lines `Status: Optimal` and `OBJECTIVE_VALUE: <number>`. "
    "It will be run later, from {src}, as `cd {src} && python3 main.py` (or solve.py, model.py), "
    "with a wall-clock limit of {limit:g} s and no network; read the data with paths relative to {src}."
)
INSTRUCTIONS = {
    "build": (
        "You are an operations-research engineer working in an OR-Space Build workspace: the current "
        "folder holds a business problem (docs/), its data (data/) and metadata.json. Write a program in "
        "src/ (src/main.py) that builds the optimisation model the documents describe from the data "
        "files and solves it with PuLP (CBC), highspy, gurobipy or coptpy (all installed). " + _RESULT
    ),
    "revise": (
        "You are an operations-research engineer working in an OR-Space Revise workspace: original/ "
        "holds the current model, its documents and data; revised/ holds the revised business "
        "requirements and data. Write the revised program in revised/src/ (revised/src/main.py) that "
        "models the revised requirements and solves them with PuLP (CBC), highspy, gurobipy or coptpy "
        "(all installed). " + _RESULT
    ),
    "explain": (
        "You are an operations-research analyst working in an OR-Space Explain workspace: the current "
        "folder holds the documents, data, formulations, logs and solver records of a model before "
        "(original/) and after (revised/) a revision. Answer the question below. Ground every claim in "
        "the workspace: name the files, variables, constraints and values you rely on, and quantify; "
        "do not invent numbers. Keep your answer in " + ANSWER_FILE + " as you work, and finish by "
        "calling submit with your complete answer.\n\nQuestion: {question}"
    ),
}
CLOSING = (
    "\n\nWorkspace {wid}. Use the tools to list and read the files, write your program and run it to "
    "check it; every command runs in the workspace folder with a limit of {call:g} s. When you are "
    "done, call submit."
)


class TaskLimitKwargs(TypedDict):
    """What `AgentLimits.task_kwargs` gives: an Inspect `Task`'s limits (None: none)."""

    message_limit: int | None
    token_limit: int | None
    time_limit: int | None
    working_limit: int | None


@dataclass(frozen=True)
class AgentLimits:
    """A sample's limits (None: none): Inspect's message, token, wall-clock and working-time limits."""

    message_limit: int | None = 100
    token_limit: int | None = None
    time_limit_s: int | None = 3600
    working_limit_s: int | None = None
    #: the limit the judge runs the program under (`orspace execute --time-limit`), told to the agent
    program_time_limit_s: float = DEFAULT_TIME_LIMIT_S

    def task_kwargs(self) -> TaskLimitKwargs:
        return {
            "message_limit": self.message_limit,
            "token_limit": self.token_limit,
            "time_limit": self.time_limit_s,
            "working_limit": self.working_limit_s,
        }


#: what an Explain prompt says when the workspace's metadata holds no question
NO_QUESTION = "(the question is not in metadata.json's explain_task: find it in the workspace's documents)"


def explain_question(workspace: Path) -> str:
    """The Explain question of a staged workspace (metadata.json `explain_task.question`, the
    release's place), else `NO_QUESTION`: the agent looks for it."""
    try:
        meta = json.loads(read_text(workspace / "metadata.json", "workspace metadata"))
        question = meta["explain_task"]["question"]
    except (InputError, OSError, ValueError, KeyError, TypeError):
        return NO_QUESTION
    return question if isinstance(question, str) and question.strip() else NO_QUESTION


def instructions(mode: str, wid: str, workspace: Path, limits: AgentLimits, call_time_s: float) -> str:
    """The filesystem agent's prompt for workspace `wid` of `mode`."""
    src = {"build": "src/", "revise": "revised/src/"}.get(mode, "")
    question = explain_question(workspace) if mode == Mode.EXPLAIN else ""
    body = INSTRUCTIONS[mode].format(src=src, limit=limits.program_time_limit_s, question=question)
    return body + CLOSING.format(wid=wid, call=call_time_s)


def staged_samples(
    staged: Path,
    manifest: JsonObject,
    mode: str,
    *,
    output: Path,
    skip: frozenset[str],
    limits: AgentLimits,
    call_time_s: float,
) -> list[Sample]:
    """One sample per staged workspace of `mode` not in `skip` (finished already)."""
    condition = Condition.from_dict(manifest.get("condition") or {}, str(staged / "manifest.json"))
    samples = []
    for wid, entry in sorted(manifest["workspaces"].items()):
        if entry.get("mode") != mode or wid in skip:
            continue
        if condition.interface == Interface.FLAT:
            prompt = entry.get("prompt")
            if not prompt:
                raise InputError(f"{staged / 'manifest.json'}: workspace {wid} has no flat prompt")
            text = read_text(staged / prompt, "flat prompt")
        else:
            text = instructions(mode, wid, staged / wid, limits, call_time_s)
        meta = {
            "workspace_id": wid,
            "mode": mode,
            "condition": condition.slug,
            "interface": condition.interface,
            "staged_dir": str(staged.resolve()),
            "incoming_dir": str((output / ".incoming" / wid).resolve()),
            "program_time_limit_s": limits.program_time_limit_s,  # told to the model (flat: by flat_solver)
        }
        samples.append(Sample(id=wid, input=text, metadata=meta))
    return samples


@solver
def workspace_dir_solver() -> Solver:
    """Put the sample's workspace copy (host path) into its metadata as `workspace_dir`."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        state.metadata["workspace_dir"] = str(current_workspace())
        return state

    return solve


def filesystem_agent() -> Solver:
    """The ReAct agent with the workspace tools and submit."""
    agent = react(
        prompt=AgentPrompt(
            instructions="You work in the folder of one OR-Space workspace; every path is relative to it."
        ),
        tools=workspace_tools(),
        submit=AgentSubmit(tool=submit_tool(), answer_only=True, keep_in_messages=True),
    )
    return as_solver(agent)


def orspace_task(
    staged: Path,
    mode: str,
    *,
    output: Path,
    config: AgentSandboxConfig,
    limits: AgentLimits = AgentLimits(),
    skip: frozenset[str] = frozenset(),
    wrap: Any = None,
) -> Task | None:
    """The Inspect task of `mode` over `staged` (None when no sample is left to run). `wrap`: a
    function applied to the solver (the run's cost budget, `accounting.budgeted`)."""
    if mode not in MODES:
        raise InputError(f"unknown mode {mode!r} (choose {', '.join(MODES)})")
    manifest = stage_manifest(staged)
    condition = Condition.from_dict(manifest.get("condition") or {}, str(staged / "manifest.json"))
    samples = staged_samples(
        staged, manifest, mode, output=output, skip=skip, limits=limits, call_time_s=config.call_time_s
    )
    if not samples:
        return None
    if condition.interface == Interface.FLAT:
        chain = [workspace_dir_solver(), flat_solver()]
        config = config.model_copy(update={"sandbox": "local", "allow_unsandboxed": True})  # no command runs
    else:
        chain = [workspace_dir_solver(), filesystem_agent()]
    solver_ = chain if wrap is None else [chain[0], *[wrap(s) for s in chain[1:]]]
    return Task(
        dataset=samples,
        solver=solver_,
        sandbox=SandboxEnvironmentSpec(SANDBOX_TYPE, config),
        name=f"orspace_{mode}",
        metadata={"condition": condition.slug, "staged": str(staged.resolve())},
        **limits.task_kwargs(),
    )
