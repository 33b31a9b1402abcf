"""The Inspect task of a track (`agents.tracks`): one sample per item, in the `tcsexam_track`
sandbox environment (the `tcsexam` one of `agents generate`, `TcsexamSandbox`, over a track item's
workspace: every command in the project's sandbox under the per-call limits, the tcsexam
checkout, the run's folder and the solvers folder hidden), with `agents.tools`' bash, python,
text_editor and submit, plus the track's checker tool (`agents.track_tools`).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import anyio
from inspect_ai import Task
from inspect_ai.agent import AgentPrompt, AgentSubmit, as_solver, react
from inspect_ai.dataset import Sample
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import SandboxEnvironment, SandboxEnvironmentConfigType, SandboxEnvironmentSpec, sandboxenv

from tcsexam.agents import workspace as ws
from tcsexam.agents.sandboxenv import AgentSandboxConfig, TcsexamSandbox, resolve_sandbox
from tcsexam.agents.tasks import AgentLimits
from tcsexam.agents.tools import submit_tool, workspace_tools
from tcsexam.agents.track_items import TrackItem, checker_task
from tcsexam.agents.track_tools import (
    STORE_TASK_FILE,
    SUBMISSION_DIR,
    CheckerSetup,
    check_construction_tool,
    check_proof_tool,
    run_dev_tool,
)
from tcsexam.fileio import Json, JsonObject
from tcsexam.runner.ownership.scratch import make_scratch, release_scratch
from tcsexam.runner.sandboxes.runas import candidate_ids, give_to
from tcsexam.suites import BINARY_TRACKS, Track

#: the Inspect sandbox environment of the track agents (the `tcsexam` one, over a track's items)
TRACK_SANDBOX = "tcsexam_track"


# ---- the sandbox environment ------------------------------------------------------------------------


def _as_config(config: SandboxEnvironmentConfigType | dict[str, Json] | None) -> AgentSandboxConfig:
    """As `sandboxenv._config`: a mapping Inspect did not decode is taken too."""
    if isinstance(config, AgentSandboxConfig):
        return config
    if isinstance(config, dict):
        return AgentSandboxConfig(**config)
    return AgentSandboxConfig()


def _make_item_environment(config: AgentSandboxConfig, metadata: JsonObject) -> TrackSandbox:
    """A sample's environment: a scratch folder with the item's files and an empty submission folder."""
    box, _ = resolve_sandbox(config)
    staged, item = Path(str(metadata.get("staged_dir"))), str(metadata.get("workspace_id"))
    manifest = ws.stage_manifest(staged)
    scratch = Path(make_scratch(config.scratch_root, kind="agent-"))
    try:
        dest = scratch / "workspace"
        listed = ws.check_staged(staged, manifest, item)
        dest.mkdir(mode=0o755)
        for rel, _ in listed:
            target = dest / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(staged / item / rel, target, follow_symlinks=False)
        (dest / SUBMISSION_DIR).mkdir()
        environment = TrackSandbox(config, box, scratch, metadata)
        give_to([str(environment.workspace)], candidate_ids())
        return environment
    except BaseException:
        release_scratch(scratch)
        raise


@sandboxenv(name=TRACK_SANDBOX)
class TrackSandbox(TcsexamSandbox):
    """The `tcsexam` sandbox environment over a track item's workspace (not an OR-Space one)."""

    @classmethod
    async def sample_init(
        cls, task_name: str, config: SandboxEnvironmentConfigType | None, metadata: dict[str, str]
    ) -> dict[str, SandboxEnvironment]:
        environment = await anyio.to_thread.run_sync(_make_item_environment, _as_config(config), dict(metadata))
        return {"default": environment}


# ---- the Inspect task ---------------------------------------------------------------------------------


@solver
def item_solver() -> Solver:
    """Put the sample's task file where its checker tool reads it (the sample's store)."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        state.store.set(STORE_TASK_FILE, str(state.metadata["task_file"]))
        return state

    return solve


def track_agent(track: str, setup: CheckerSetup) -> Solver:
    if track in BINARY_TRACKS:
        checker = check_proof_tool(setup)
    elif track == Track.SOLVER:
        checker = run_dev_tool(setup)
    else:
        checker = check_construction_tool(setup)
    agent = react(
        prompt=AgentPrompt(instructions="You work in the folder of one TCSExam task; every path is relative to it."),
        tools=[*workspace_tools(), checker],
        submit=AgentSubmit(tool=submit_tool(), answer_only=True, keep_in_messages=True),
    )
    return as_solver(agent)


def track_task(
    items: list[TrackItem],
    *,
    staged: Path,
    run_dir: Path,
    attempt: str,
    config: AgentSandboxConfig,
    setup: CheckerSetup,
    limits: AgentLimits,
    wrap: Any = None,
) -> Task:
    """The Inspect task of one track over `items` (one sample each)."""
    track = items[0].track
    samples = [
        Sample(
            id=it.item,
            input=it.prompt,
            metadata={
                "workspace_id": it.item,
                "mode": track,
                "track": track,
                "attempt": attempt,
                "task_file": str(checker_task(staged, it)),
                "staged_dir": str(staged.resolve()),
                "incoming_dir": str((run_dir / ".incoming" / it.item).resolve()),
            },
        )
        for it in items
    ]
    agent = track_agent(track, setup)
    return Task(
        dataset=samples,
        solver=[item_solver(), agent if wrap is None else wrap(agent)],
        sandbox=SandboxEnvironmentSpec(TRACK_SANDBOX, config),
        name=f"tcsexam_{track}",
        metadata={"track": track, "attempt": attempt},
        **limits.task_kwargs(),
    )
