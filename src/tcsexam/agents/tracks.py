"""`tcsexam agents solve`: a model writes the TCSExam submissions of a track, as an agent with the
judge's own checker at hand (docs/agents.md, "TCSExam tracks").

One Inspect task per track, one sample per item (the suite's items of the track, or those named).
Each sample gets a workspace (the same `tcsexam` sandbox environment as `agents generate`: every
command in the project's sandbox under the per-call limits, the tcsexam checkout, the run's
folder and the solvers folder hidden) holding only what the task gives the model:

- theorem / open_conjecture: `task/<statement>.v` (the task's statement file) and the prompt
  (theorem name, statement, libraries, axioms, limits); the agent writes `submission/proof.v`
  and may call `check_proof` (the judge's `check_proof` on its draft, a bounded number of times);
- construction: `task/instance.yaml` (the task file: the parameters a program reads as
  `{instance}`) and the prompt (kind, certificate format, parameters, direction, baseline and
  reference of the reward, limits); the agent writes `submission/construction.txt` or a program
  (`submission/solver.yaml` and its files) and may call `check_construction` (`construction run`'s
  judging of its draft).

The tools are `agents.tools`' bash, python, text_editor and submit, plus the checker tool.

When a sample ends, what the agent left in `submission/` becomes the attempt folder
`<solvers_dir>/<model>/<item>/<attempt>/` (a proof: `proof.v` only; a construction: the folder,
never both `construction.txt` and `solver.yaml`: the object is kept) with `generation.json`
(`accounting.GenerationRecord`) beside it, so the workflow's proof and construction rules judge
it unchanged. The record is written last: an attempt folder with a final record is finished, and
a rerun of the same command asks the model nothing for it. An infrastructure failure (provider,
sandbox, harness) writes no attempt folder (its record is kept in the run folder) and the run is
incomplete (exit 1) until a rerun generates it.

Run folder (`--output`): run.json (what the run is: a rerun must match), staged/ (each item's
workspace files and their manifest), logs/*.eval (Inspect's transcripts), samples/<item>/
generation.json (every sample's last record, final or not; left_out.txt: files not handed in),
generation.json (the summary).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import os
import re
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.agent import AgentPrompt, AgentSubmit, as_solver, react
from inspect_ai.dataset import Sample
from inspect_ai.hooks import Hooks, SampleEnd, hooks
from inspect_ai.log import EvalSample
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import SandboxEnvironment, SandboxEnvironmentConfigType, SandboxEnvironmentSpec, sandboxenv

from tcsexam.agents import workspace as ws
from tcsexam.agents.accounting import (
    GENERATION_FILE,
    CostBudget,
    GenerationRecord,
    StopReason,
    budgeted,
    prices_for,
    read_generation,
    spent_in,
    write_generation,
)
from tcsexam.agents.sandboxenv import AgentSandboxConfig, TcsexamSandbox, resolve_sandbox
from tcsexam.agents.tasks import AgentLimits
from tcsexam.agents.tools import submit_tool, workspace_tools
from tcsexam.agents.track_tools import (
    STORE_TASK_FILE,
    SUBMISSION_DIR,
    CheckerSetup,
    check_construction_tool,
    check_proof_tool,
)
from tcsexam.errors import InputError
from tcsexam.fileio import atomic_write_json, atomic_write_text, exclusive_use, read_json, read_yaml
from tcsexam.paths import config_file
from tcsexam.problems import CONSTRUCTIONS
from tcsexam.proofs import coq
from tcsexam.proofs.check import PROOF_NAME, choose_proof_sandbox, sandbox_coq_version
from tcsexam.proofs.task import ProofTask, load_proof_task
from tcsexam.records.digest import hash_file
from tcsexam.runner.batch import PoolOptions, RunOptions
from tcsexam.runner.construction import PROGRAM_NAME, STATIC_NAME, load_construction_task
from tcsexam.runner.limiter.scratch import make_scratch, release_scratch
from tcsexam.runner.sandboxes.runas import candidate_ids, give_to
from tcsexam.suites import BINARY_TRACKS, Track, load_suite

#: the Inspect sandbox environment of the track agents (the `tcsexam` one, over a track's items)
TRACK_SANDBOX = "tcsexam_track"
#: the tracks an agent can work on
AGENT_TRACKS = (Track.THEOREM.value, Track.OPEN_CONJECTURE.value, Track.CONSTRUCTION.value)
TASK_DIR = "task"  #: the workspace folder of the task's files (read them; the judge uses its own copy)
INSTANCE_NAME = "instance.yaml"  #: a construction's parameter file in the workspace
RUN_FILE = "run.json"
SUMMARY_FILE = "generation.json"
#: a model label and an attempt id name folders: solvers/<model>/<item>/<attempt>/
SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]*")


# ---- the items ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TrackItem:
    """One item of a track: its task file, the files its workspace holds and the prompt."""

    item: str
    track: str
    task_file: Path
    files: dict[str, Path]  #: workspace path -> the file it is a copy of
    prompt: str


_TOOLS = (
    "Tools: bash (a shell command line) and python (a program) run in the workspace folder, in a "
    "sandbox without network, each call under a limit of {call:g} s; text_editor views, creates and "
    "edits files; {check} runs the judge's exact check on your draft (at most {checks} calls in this "
    "task); submit ends the task. The judge checks {what} as you leave it when you submit (or when "
    "the task's limits stop you)."
)


def _proof_prompt(t: ProofTask, statement_rel: str, checks: str, call_s: float) -> str:
    libraries = ", ".join(t.libraries) or "none"
    axioms = ", ".join(t.axioms) or "none"
    if t.track == Track.OPEN_CONJECTURE:
        goal = (
            f"This is an open conjecture: prove it or refute it. A proof is `Theorem {t.theorem} : {t.statement}.`; "
            f"a refutation is `Theorem {t.refutation} : {t.negation}.` (the file defines {t.negation}). "
            "Either one, complete, resolves it."
        )
    else:
        goal = f"Prove `Theorem {t.theorem} : {t.statement}.` (any type convertible to {t.statement} is accepted)."
    limits = t.limits
    return "\n\n".join(
        [
            f"You are proving a {t.track.replace('_', ' ')} in Coq {t.coq_version}: task {t.id}"
            + (f" ({t.description})." if t.description else "."),
            f"The workspace holds {statement_rel}, the task's statement file, which the judge compiles as the "
            f"library TCSExam.Task. {goal}",
            f"Write {SUBMISSION_DIR}/{PROOF_NAME}. It starts with `From TCSExam Require Import Task.` (which does not "
            "re-import what the statement file imports: Require the libraries you use), and is compiled as "
            "TCSExamSubmission.Proof. Libraries a proof may load: "
            f"{libraries}. Axioms it may rest on: {axioms}; Admitted, Axiom and Parameter make it incomplete. "
            "Commands that load or extract files, change the kernel's checks or declare ML modules are refused. "
            f"Each checker step runs under a limit of {limits.wall_s:g} s and {limits.mem_mb} MB.",
            _TOOLS.format(call=call_s, check="check_proof", checks=checks, what=f"{SUBMISSION_DIR}/{PROOF_NAME}"),
            f"The statement file {statement_rel}:\n```coq\n{t.statement_file.read_text(encoding='utf-8')}\n```",
        ]
    )


def _construction_prompt(task_file: Path, checks: str, call_s: float) -> str:
    t = load_construction_task(task_file)
    data = read_yaml(t.source, "task file")
    problem = t.problem_impl
    (inst,) = t.instances
    params = ", ".join(f"{k} = {v}" for k, v in (data.get("parameters") or {}).items())
    fmt = (sys.modules[type(problem).__module__].__doc__ or "").strip()
    baseline, reference = inst.meta.get("baseline"), inst.meta.get("reference")
    if problem.direction == "maximize":
        rule = f"max(0, (v - {baseline}) / ({reference} - {baseline}))"
    else:
        rule = f"max(0, ({baseline} - v) / ({baseline} - {reference}))"
    limits = t.limits
    return "\n\n".join(
        [
            f"You are building a construction: task {t.id} ({data.get('description') or t.problem}).",
            f"Kind {t.problem} ({problem.direction} the value), parameters: {params}. {fmt}",
            f"Score: for the verified value v, the reward {rule}: the baseline {baseline} scores 0, the reference "
            f"{reference} scores 1, beyond it more. An object the checker rejects scores 0. The certificate is lines "
            "of whitespace-separated numbers; blank lines and lines starting with # are ignored.",
            f"Hand in, in {SUBMISSION_DIR}/, exactly one of: {STATIC_NAME} (the object itself), or {PROGRAM_NAME} "
            'with a program that writes the object to the file {solution}, e.g. `command: ["python3", "build.py", '
            '"{solution}"]` with build.py beside it in ' + SUBMISSION_DIR + "/. The program may read the parameters "
            f"from {{instance}} (this task's parameter file: {TASK_DIR}/{INSTANCE_NAME} here) and runs without "
            f"network under a limit of {limits.wall_s:g} s and {limits.mem_mb} MB.",
            _TOOLS.format(call=call_s, check="check_construction", checks=checks, what=f"{SUBMISSION_DIR}/"),
        ]
    )


def load_items(
    track: str, *, suite: str | None, items: list[str] | None, call_s: float, checks: str
) -> list[TrackItem]:
    """The items of `track` to run: those named (`items`, each checked to be of the track and, with a
    suite, in it), else the suite's items of the track."""
    if track not in AGENT_TRACKS:
        raise InputError(f"track {track!r}: agents write submissions for {', '.join(AGENT_TRACKS)}")
    names: list[str]
    if suite is not None:
        s = load_suite(suite)
        names = list(items) if items else list(s.tracks[track])
        for name in names:
            if s.track_of.get(name) != track:
                raise InputError(f"{s.source}: {name} is not a {track} item of suite {s.id}")
    elif items:
        names = list(items)
    else:
        raise InputError("name the items (--items) or a suite (--suite)")
    if len(set(names)) != len(names):
        raise InputError(f"an item is named twice: {', '.join(names)}")
    out = []
    for name in names:
        task_file = config_file(name, "tasks").resolve()
        if track in BINARY_TRACKS:
            t = load_proof_task(task_file)
            if t.track != track:
                raise InputError(f"{task_file}: task {t.id} is a {t.track} task, not {track}")
            rel = f"{TASK_DIR}/{t.statement_file.name}"
            out.append(
                TrackItem(t.id, track, task_file, {rel: t.statement_file}, _proof_prompt(t, rel, checks, call_s))
            )
        else:
            t = load_construction_task(task_file)
            if t.problem not in CONSTRUCTIONS:
                raise InputError(f"{task_file}: task {t.id} is not a construction task")
            (inst,) = t.instances
            out.append(
                TrackItem(
                    t.id,
                    track,
                    task_file,
                    {f"{TASK_DIR}/{INSTANCE_NAME}": Path(inst.path)},
                    _construction_prompt(task_file, checks, call_s),
                )
            )
        if not SAFE_NAME.fullmatch(out[-1].item):
            raise InputError(f"{task_file}: item id {out[-1].item!r} cannot name a folder")
    return out


def stage_items(items: list[TrackItem], staged: Path) -> None:
    """The items' workspace files under `staged/<item>/` and their manifest (what the `tcsexam`
    sandbox copies in, each file checked against its digest): only the task's statement or
    parameter file, never a reference or another item's file."""
    shutil.rmtree(staged, ignore_errors=True)
    entries = {}
    for it in items:
        files = []
        for rel, source in sorted(it.files.items()):
            target = staged / it.item / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
            files.append({"path": rel, "sha256": hash_file(target)})
        entries[it.item] = {"track": it.track, "task_file": str(it.task_file), "files": files}
    manifest = {
        "kind": "tcsexam-track-items",
        "workspaces": entries,
        # what an item's workspace holds is decided here (load_items): the task's own statement
        # or parameter file, which the model is meant to read; no other file can enter
        "leakage_audit": {"passed": True, "by": "tcsexam agents solve (task files only)"},
    }
    atomic_write_json(staged / "manifest.json", manifest)


# ---- the sandbox environment ------------------------------------------------------------------------


def _as_config(config: SandboxEnvironmentConfigType | None) -> AgentSandboxConfig:
    if isinstance(config, AgentSandboxConfig):
        return config
    if isinstance(config, dict):
        return AgentSandboxConfig(**config)
    return AgentSandboxConfig()


def _make_item_environment(config: AgentSandboxConfig, metadata: dict[str, Any]) -> TrackSandbox:
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
    checker = check_proof_tool(setup) if track in BINARY_TRACKS else check_construction_tool(setup)
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
                "task_file": str(it.task_file),
                "staged_dir": str(staged.resolve()),
                "incoming_dir": str((run_dir / ".incoming" / it.item).resolve()),
                "track_run": str(run_dir.resolve()),
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


# ---- a run --------------------------------------------------------------------------------------------


@dataclass
class SolveSettings:
    """One run of a track: its items, where the submissions go, the model (`providers.ModelConfig`),
    the sandbox, limits, the checker calls a sample may make, prices and the run's cost limit."""

    track: str
    output: Path  #: the run folder
    solvers_dir: Path
    attempt: str
    model: Any
    suite: str | None = None
    items: tuple[str, ...] = ()
    sandbox: AgentSandboxConfig = AgentSandboxConfig()
    limits: AgentLimits = AgentLimits()
    max_checks: int | None = 10
    prices: str | None = None
    max_cost: float | None = None
    retry_on_error: int = 1

    @property
    def model_label(self) -> str:
        return str(self.model.name)

    def attempt_dir(self, item: str) -> Path:
        return Path(self.solvers_dir) / self.model_label / item / self.attempt

    def checker_run(self) -> RunOptions:
        return RunOptions(
            sandbox=self.sandbox.sandbox,
            limiter=self.sandbox.limiter,
            allow_unsandboxed=self.sandbox.allow_unsandboxed,
            progress=False,
            pool=PoolOptions(workers=1, use_ray=False),
        )


def finished_attempt(folder: Path) -> GenerationRecord | None:
    """The final record of an attempt folder an agent run finished, else None."""
    path = folder / GENERATION_FILE
    if not path.is_file():
        return None
    record = read_generation(path)
    return record if record.final else None


def _collect(submission: Path, dest: Path, track: str) -> list[str]:
    """Copy what the agent handed in (`submission`, already copied out of the sandbox without links)
    to `dest`: a proof's proof.v only; a construction's folder, its solver.yaml (and program) dropped
    when construction.txt is there too. The paths not handed in."""
    left: list[str] = []
    if not submission.is_dir():
        return left
    everything = sorted(p.relative_to(submission).as_posix() for p in submission.rglob("*") if p.is_file())
    if track in BINARY_TRACKS:
        keep = [PROOF_NAME] if PROOF_NAME in everything else []
    elif STATIC_NAME in everything:
        keep = [STATIC_NAME]
    else:
        keep = everything if PROGRAM_NAME in everything else []
    for rel in everything:
        if rel in keep:
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(submission / rel, dest / rel)
        else:
            left.append(rel)
    return left


class _Finisher:
    """Turns an ended sample into its attempt folder and records, once per sample."""

    def __init__(self, settings: SolveSettings, prices: Any):
        self.settings, self.prices = settings, prices
        self.run_dir = Path(settings.output)
        self.done: dict[str, GenerationRecord] = {}

    def record_path(self, item: str) -> Path:
        return self.run_dir / "samples" / item / GENERATION_FILE

    def finish(self, sample: EvalSample, log_file: str | None = None) -> GenerationRecord:
        item = str((sample.metadata or {}).get("workspace_id") or sample.id)
        dest = self.settings.attempt_dir(item)
        before = self.done.get(item)
        if before is not None and before.sample_uuid == sample.uuid:
            if log_file and before.log_file != log_file:
                before = dataclasses.replace(before, log_file=log_file)
                write_generation(self.record_path(item), before)
                if before.final and dest.is_dir():
                    write_generation(dest / GENERATION_FILE, before)
                self.done[item] = before
            return before
        record = GenerationRecord.from_sample(sample, self.settings.model, self.prices, log_file=log_file)
        incoming = self.run_dir / ".incoming" / item
        if record.final and not incoming.is_dir():
            record = dataclasses.replace(
                record,
                final=False,
                stop_reason=StopReason.HARNESS_ERROR,
                stop_detail=f"the worked workspace was not copied out of the sandbox ({record.stop_reason})",
            )
        sample_dir = self.record_path(item).parent
        sample_dir.mkdir(parents=True, exist_ok=True)
        if record.final:
            part = dest.with_name(f"{dest.name}.part")
            shutil.rmtree(part, ignore_errors=True)
            part.mkdir(parents=True)
            left = _collect(incoming / SUBMISSION_DIR, part, self.settings.track)
            if left:
                atomic_write_text(sample_dir / "left_out.txt", "".join(f"{SUBMISSION_DIR}/{r}\n" for r in left))
            else:
                (sample_dir / "left_out.txt").unlink(missing_ok=True)
            write_generation(part / GENERATION_FILE, record)
            shutil.rmtree(dest, ignore_errors=True)
            os.replace(part, dest)
        shutil.rmtree(incoming, ignore_errors=True)
        with contextlib.suppress(FileNotFoundError):
            Path(f"{incoming}.left-out").unlink()
        write_generation(self.record_path(item), record)
        self.done[item] = record
        return record


#: run folder -> the finisher of the track run writing into it (read by the Inspect hook)
_ACTIVE: dict[str, _Finisher] = {}


@hooks(name="tcsexam_tracks", description="writes each finished TCSExam track sample's attempt folder as it ends")
class TrackHook(Hooks):
    def enabled(self) -> bool:
        return bool(_ACTIVE)

    async def on_sample_end(self, data: SampleEnd) -> None:
        finisher = _ACTIVE.get(str((data.sample.metadata or {}).get("track_run")))
        if finisher is not None:
            finisher.finish(data.sample)


def run_identity(settings: SolveSettings, items: list[TrackItem]) -> dict[str, Any]:
    """What makes two invocations the same run (run.json)."""
    public = settings.model.public()
    return {
        "model": {k: public.get(k) for k in ("name", "model", "base_url", "provider")},
        "track": settings.track,
        "items": {it.item: hashlib.sha256(it.prompt.encode()).hexdigest() for it in items},
        "solvers_dir": str(Path(settings.solvers_dir).resolve()),
        "attempt": settings.attempt,
        "limits": dataclasses.asdict(settings.limits),
        "max_checks": settings.max_checks,
        "calls": settings.sandbox.model_dump(include={"call_time_s", "call_mem_mb", "call_nproc", "workspace_mb"}),
    }


def _check_names(settings: SolveSettings) -> None:
    if not SAFE_NAME.fullmatch(settings.model_label):
        raise InputError(
            f"model label {settings.model_label!r} cannot name a folder of {settings.solvers_dir}: "
            "give one with --model-name (letters, digits, . _ + -)"
        )
    if not SAFE_NAME.fullmatch(settings.attempt):
        raise InputError(f"attempt {settings.attempt!r} cannot name a folder (letters, digits, . _ + -)")
    if settings.max_checks is not None and settings.max_checks < 0:
        raise InputError("the number of checker calls must not be negative")


def _check_checker(settings: SolveSettings, items: list[TrackItem]) -> str:
    """Make sure the judge's checker runs here before the model is asked anything (one line)."""
    run = settings.checker_run()
    if settings.track in BINARY_TRACKS:
        box, why = choose_proof_sandbox(run.sandbox, allow_unsandboxed=run.allow_unsandboxed, limiter=run.limiter)
        version = sandbox_coq_version(box, run.limiter)
        for it in items:
            t = load_proof_task(it.task_file)
            if not coq.version_matches(t.coq_version, version):
                raise InputError(
                    f"{t.source}: task {t.id} needs Coq {t.coq_version}, but the checker's coqc is {version}"
                )
        return f"proof checker: coqc {version} ({why})"
    return "construction checker: the task's exact checker (programs in the project's sandbox)"


def _claim(settings: SolveSettings, items: list[TrackItem]) -> dict[str, GenerationRecord]:
    """Refuse a run folder of another run and an attempt folder not written by an agent run; the
    finished items."""
    run_dir = Path(settings.output)
    identity = run_identity(settings, items)
    path = run_dir / RUN_FILE
    if path.exists():
        before = read_json(path, "track run file")
        if before != identity:
            diff = sorted(k for k in identity if before.get(k) != identity[k]) if isinstance(before, dict) else ["all"]
            raise InputError(
                f"{path}: {run_dir} holds another run (differs in {', '.join(diff)}); use another --output, "
                "or remove it to start again"
            )
    finished = {}
    for it in items:
        folder = settings.attempt_dir(it.item)
        if folder.exists() and not (folder / GENERATION_FILE).is_file():
            raise InputError(
                f"{folder}: holds a submission no agent run wrote (no {GENERATION_FILE}); choose another --attempt"
            )
        record = finished_attempt(folder) if folder.exists() else None
        if record is not None:
            finished[it.item] = record
    if not path.exists():
        run_dir.mkdir(parents=True, exist_ok=True)
        atomic_write_json(path, identity)
    return finished


def solve(
    settings: SolveSettings, *, model: Any = None, progress: Callable[[str], None] | None = None
) -> dict[str, Any]:
    """Run the track (`model`: an Inspect Model instead of `settings.model`'s, for tests); returns the
    summary written to the run folder's generation.json."""
    say = progress or (lambda line: None)
    _check_names(settings)
    checks = "unlimited" if settings.max_checks is None else str(settings.max_checks)
    items = load_items(
        settings.track,
        suite=settings.suite,
        items=list(settings.items) or None,
        call_s=settings.sandbox.call_time_s,
        checks=checks,
    )
    run_dir, solvers = Path(settings.output), Path(settings.solvers_dir)
    hidden = (*settings.sandbox.hidden, str(run_dir.resolve()), str(solvers.resolve()))
    sandbox = settings.sandbox.model_copy(update={"hidden": hidden})
    say(resolve_sandbox(sandbox)[1])
    say(_check_checker(settings, items))
    prices = prices_for(settings.prices, settings.model.price_keys) if settings.prices else None
    if settings.model.api_key_env and model is None:
        settings.model.api_key()  # an unset key: one line, before anything is written
    run_dir.mkdir(parents=True, exist_ok=True)
    with exclusive_use([(run_dir, True)]):
        finished = _claim(settings, items)
        say(f"{len(finished)} of {len(items)} {settings.track} items finished already (not asked again)")
        todo = [it for it in items if it.item not in finished]
        budget = CostBudget(settings.max_cost, spent_in(list(finished.values())))
        finisher = _Finisher(settings, prices)
        if todo:
            staged = run_dir / "staged"
            stage_items(todo, staged)
            shutil.rmtree(run_dir / ".incoming", ignore_errors=True)
            setup = CheckerSetup(
                run=settings.checker_run(),
                max_checks=settings.max_checks,
                hidden=hidden,
                scratch_root=settings.sandbox.scratch_root,
            )
            task = track_task(
                todo,
                staged=staged,
                run_dir=run_dir,
                attempt=settings.attempt,
                config=sandbox,
                setup=setup,
                limits=settings.limits,
                wrap=functools.partial(budgeted, budget=budget, prices=prices),
            )
            _run_eval(settings, task, finisher, model)
        return _summarise(settings, items, finisher, budget)


def _run_eval(settings: SolveSettings, task: Task, finisher: _Finisher, model: Any) -> None:
    run_dir = Path(settings.output).resolve()
    _ACTIVE[str(run_dir)] = finisher
    try:
        logs = inspect_eval(
            task,
            model=model if model is not None else settings.model.inspect_model(),
            log_dir=str(run_dir / "logs"),
            log_format="eval",
            display="none",
            fail_on_error=False,
            retry_on_error=settings.retry_on_error,
            score=False,
            **{k: v for k, v in settings.model.eval_kwargs().items() if v is not None},
        )
    finally:
        _ACTIVE.pop(str(run_dir), None)
    for log in logs:  # what the hook did not finish, and the logs' names
        for sample in log.samples or []:
            finisher.finish(sample, log_file=str(Path(log.location).resolve().relative_to(run_dir)))


def _summarise(
    settings: SolveSettings, items: list[TrackItem], finisher: _Finisher, budget: CostBudget
) -> dict[str, Any]:
    incomplete, stops = {}, {}
    for it in items:
        record = finished_attempt(settings.attempt_dir(it.item)) if settings.attempt_dir(it.item).is_dir() else None
        if record is None:
            path = finisher.record_path(it.item)
            why = "not run"
            if path.is_file():
                r = read_generation(path)
                why = f"{r.stop_reason}: {r.stop_detail or ''}".strip(": ")
            incomplete[it.item] = why
        else:
            stops[str(record.stop_reason)] = stops.get(str(record.stop_reason), 0) + 1
    summary = {
        "track": settings.track,
        "model": settings.model_label,
        "attempt": settings.attempt,
        "solvers_dir": str(settings.solvers_dir),
        "items": len(items),
        "finished": len(items) - len(incomplete),
        "generated_now": len(finisher.done),
        "complete": not incomplete,
        "incomplete": incomplete,
        "stop_reasons": dict(sorted(stops.items())),
        "cost_usd": round(budget.spent, 6),
    }
    shutil.rmtree(Path(settings.output) / ".incoming", ignore_errors=True)
    atomic_write_json(Path(settings.output) / SUMMARY_FILE, summary)
    return summary


def summary_line(summary: dict[str, Any]) -> str:
    stops = ", ".join(f"{k} {v}" for k, v in summary["stop_reasons"].items()) or "none"
    return (
        f"{summary['finished']}/{summary['items']} {summary['track']} items finished ({summary['generated_now']} "
        f"generated now; stop reasons: {stops}); cost {summary['cost_usd']:g} USD; attempts in "
        f"{summary['solvers_dir']}/{summary['model']}/<item>/{summary['attempt']}"
    )


__all__ = ["AGENT_TRACKS", "SolveSettings", "TrackItem", "load_items", "solve", "stage_items"]
