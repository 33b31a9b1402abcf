"""`tcsexam orspace execute`: run Build/Revise submissions in the runner's sandbox and limits.

A submission is a workspace after the agent worked in it (release or staged layout). Per workspace:

- task root: the workspace (Build) or `revised/` (Revise); the program lives in `<task root>/src/`.
- entry point: `submission.yaml` (`command: [...]`, placeholders `{python}` `{src}` `{root}`
  `{result_file}` `{time_limit}`) in the workspace or the task root; else the first of
  `src/main.py`, `src/solve.py`, `src/model.py`, `src/optimization_model.py`,
  `src/current_heuristic.py`; else the only `.py` file in `src/`. Run with this Python (highspy and
  PuLP available) from `<task root>/src` (the release's `cd src; python <program>.py`).
- the workspace is copied to a scratch folder first, so the submission is never modified; the
  program may write only there. `ORSPACE_RESULT_FILE` names the structured result file, and
  `TCSEXAM_TIME_LIMIT` the wall-clock limit (default 180 s, the paper's protocol).
- status and objective come from `result.derive` (result file, else `OBJECTIVE_VALUE:`/status
  lines, with the solver's own optimality flag deciding Optimal).

Failure modes recorded here: execution_error (non-zero exit, signal, memory, no entry point
that can start), timeout, infeasible, unbounded, not_optimal, missing_output (no program, or no
status/objective reported). wrong_objective is decided by `score-objectives`.

A workspace is a kind of candidate: it runs through the runner's machinery, not a copy of it.
Records (`record.WorkspaceRecord`) live in the runner's `RecordStore`: `<out>/records/<workspace_id>.json`,
written as each finishes (the resume point), each with a digest of its own content, reused when its
key (`digest.record_key` over the workspace files hashed like a Solver candidate's, the limits, the
sandbox, the interpreter and the harness version) matches and it is not an `infrastructure_error`;
a damaged record, or one made under another key, is set aside into `records/.set-aside/` (kept)
and its workspace runs again. Workspaces run in the runner's pool (`--workers 1`: in this process;
more: Ray actors, as the Solver track), which retries an infrastructure failure
`DEFAULT_MAX_RETRIES` times and then records `infrastructure_error` "(after K tries)". How a
finished run becomes an OR-Space status is `record.outcome_verdict`.
`<out>/predictions.jsonl` holds `workspace_id, status, objective, failure_mode` per workspace.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import shutil
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tcsexam import HARNESS_VERSION
from tcsexam.containment import SandboxName
from tcsexam.errors import InputError
from tcsexam.fileio import (
    JsonObject,
    UntrustedFileError,
    atomic_write_text,
    exclusive_use,
    read_untrusted,
    read_yaml,
)
from tcsexam.orspace import capture, result
from tcsexam.orspace.conditions import staged_condition
from tcsexam.orspace.objectives import FailureMode
from tcsexam.orspace.record import WorkspaceRecord, outcome_verdict
from tcsexam.orspace.release import OBJECTIVE_MODES, Mode, discover_workspaces, parse_workspace_id
from tcsexam.orspace.result import RESULT_ENV, derive
from tcsexam.orspace.solvers import UNKNOWN, detect_solver, licence_digest, licence_mounts
from tcsexam.records import Termination
from tcsexam.records.digest import IGNORED_DIRS, IGNORED_SUFFIXES, hash_candidate, record_key
from tcsexam.records.key import ensure_key
from tcsexam.records.store import RecordStore
from tcsexam.runner.engine.batch import BatchHooks, KeyedBatch, PoolOptions, RunOptions, run_batch
from tcsexam.runner.limiter import LaunchError, Limits, RunPaths, RunSpec
from tcsexam.runner.ownership.scratch import make_scratch, release_scratch, scratch_identity, scratch_intact
from tcsexam.runner.sandboxes import choose_sandbox
from tcsexam.runner.sandboxes.base import Sandbox
from tcsexam.runner.solver.candidate import program_env

DEFAULT_TIME_LIMIT_S = 180.0
#: every program's limits unless told: the wall-clock time limit and memory (`--time-limit`, `--mem-mb`)
DEFAULT_LIMITS = Limits(wall_s=DEFAULT_TIME_LIMIT_S, mem_mb=4096)
#: how the programs run unless told: one at a time in this process, no progress bar (a line each)
DEFAULT_RUN = RunOptions(progress=False, pool=PoolOptions(workers=1))
#: the OR-Space sandbox image (envs/orspace.Dockerfile, `make orspace-image`)
DEFAULT_ORSPACE_IMAGE = "tcsexam-orspace:latest"
ENTRY_POINTS = ("main.py", "solve.py", "model.py", "optimization_model.py", "current_heuristic.py")
#: the `problem` of a workspace's record key (a Solver task's problem names its family)
KEY_PROBLEM = "orspace-workspace"
#: the fields of a run's `ProcessOutcome` a workspace record keeps as they are
OUTCOME_FIELDS = (
    "exit_code",
    "signal",
    "termination",
    "wall_s",
    "cpu_s",
    "peak_mem_mb",
    "stdout_tail",
    "stderr_tail",
    "limiter",
)


@dataclass
class ExecuteSettings:
    """How the programs run: every program's limits (its time limit is `limits.wall_s`), the
    run options of every command that runs programs (sandbox, limiter, pool: `pool.workers`
    programs at once, on Ray actors when more than one; the docker sandbox's image
    `run.docker_image`: None = $TCSEXAM_ORSPACE_IMAGE, else tcsexam-orspace:latest when present
    (make orspace-image: the four solvers), else the Solver track's candidate image), the
    interpreter, licences."""

    limits: Limits = DEFAULT_LIMITS
    run: RunOptions = DEFAULT_RUN
    #: the programs' interpreter: None = this one, or under docker the image's `python3` (a bare
    #: name is looked up on the sandbox's PATH; a path is mounted read-only with its prefix)
    python: str | None = None
    #: solver -> full licence (file for gurobi, folder or file for copt), mounted read-only;
    #: without one gurobipy and coptpy run with the size-limited licences their wheels ship
    licences: dict[str, str] = field(default_factory=dict)

    @property
    def interpreter(self) -> str:
        """`python` as resolved for the sandbox (`execute` resolves it before any program runs)."""
        if self.python is None:
            raise RuntimeError("the programs' interpreter is not resolved yet (ExecuteSettings.python)")
        return self.python


def task_root(workspace: Path, mode: Mode) -> Path:
    return workspace if mode == Mode.BUILD else workspace / "revised"


def find_entry(workspace: Path, mode: Mode) -> tuple[list[str] | None, str]:
    """(argv template, description) or (None, why there is none)."""
    root = task_root(workspace, mode)
    for folder in (workspace, root):
        spec = folder / "submission.yaml"
        if spec.exists():
            data = read_yaml(spec, "submission file")
            command = data.get("command") if isinstance(data, dict) else None
            if not (isinstance(command, list) and command and all(isinstance(c, str) for c in command)):
                raise InputError(f"{spec}: `command` must be a non-empty list of strings")
            return command, f"{spec.relative_to(workspace)}"
    src = root / "src"
    if not src.is_dir():
        return None, f"no {src.relative_to(workspace)}/ folder"
    for name in ENTRY_POINTS:
        if (src / name).is_file():
            return ["{python}", name], f"{(src / name).relative_to(workspace)}"
    programs = sorted(p.name for p in src.glob("*.py"))
    if len(programs) == 1:
        return ["{python}", programs[0]], f"{(src / programs[0]).relative_to(workspace)}"
    if not programs:
        return None, f"no program in {src.relative_to(workspace)}/"
    return (
        None,
        f"{len(programs)} programs in {src.relative_to(workspace)}/ and none is called {' or '.join(ENTRY_POINTS)}",
    )


def workspace_key(
    workspace: Path,
    settings: ExecuteSettings,
    condition: str | None = None,
    image: str | None = None,
) -> str:
    """The record's reuse key (`digest.record_key`, the Solver's scheme: a workspace is a candidate
    and its own instance): the workspace's files, the limits, the sandbox, the interpreter and the
    harness version."""
    return record_key(
        candidate_hash=hash_candidate(workspace),
        instance_hash="",
        limits=settings.limits.as_dict(),
        sandbox=settings.run.sandbox,
        seed=0,
        meta={
            "python": settings.python,
            **({"condition": condition} if condition else {}),
            **({"licences": licence_digest(settings.licences)} if settings.licences else {}),
            **({"image": image} if image else {}),
        },
        problem=KEY_PROBLEM,
    )


def _argv(template: list[str], values: dict[str, str], workspace: Path, entry: str) -> list[str]:
    try:
        return [part.format(**values) for part in template]
    except (KeyError, IndexError, ValueError) as exc:
        raise InputError(f"{workspace}: {entry}: bad placeholder in command: {exc}") from None


@dataclass
class WorkspaceContext:
    """What every run of one `execute` shares (sent once to each Ray actor): the runner's pools
    call `execute(workspace_id)` and `infrastructure_record(workspace_id, message)`."""

    settings: ExecuteSettings  #: `run.sandbox` resolved (never `auto`), `run.docker_image` the image it runs or None
    workspaces: dict[str, Path]
    keys: dict[str, str]
    entries: dict[str, tuple[list[str] | None, str]]  #: find_entry's answer per workspace
    #: the sandbox `settings.run.sandbox` names, checked to work here (it travels as its own small state)
    sandbox: Sandbox
    condition: str | None = None  #: the stage condition's slug, recorded in every record
    hidden_paths: tuple[str, ...] = ()  #: hidden from the programs: the output folder, the record key's
    scratch_root: str | None = None  #: parent of the scratch folders (None: $TMPDIR)

    @property
    def limits(self) -> Limits:
        """Every program's limits (the batch engine's watchdog reads them)."""
        return self.settings.limits

    def blank_record(self, wid: str, **fields: Any) -> WorkspaceRecord:
        """A record of `wid` with its identity fields (nothing run yet)."""
        s = self.settings
        return WorkspaceRecord(
            workspace_id=wid,
            mode=parse_workspace_id(wid)[1],
            workspace=str(self.workspaces[wid]),
            limits=s.limits.as_dict(),
            sandbox=s.run.sandbox,
            harness_version=HARNESS_VERSION,
            key=self.keys.get(wid),
            entry_point=self.entries[wid][1],
            condition=self.condition,
            **fields,
        )

    def infrastructure_record(self, wid: str, message: str) -> WorkspaceRecord:
        return self.blank_record(wid, failure_mode=FailureMode.INFRASTRUCTURE_ERROR, message=message)

    def execute(self, wid: str) -> WorkspaceRecord:
        """Run one workspace's program; never raises (a harness failure is a record)."""
        try:
            return run_workspace(self, wid)
        except Exception as exc:  # the harness failed, not the program
            return self.infrastructure_record(wid, " ".join(f"harness error: {type(exc).__name__}: {exc}".split()))


def helper_library(scratch: Path) -> Path:
    """A folder that gives every program, in every sandbox, the result helpers of the docs
    (`from tcsexam.orspace.result import pulp_result, highs_result, write_result`): a copy of
    `tcsexam/orspace/result.py` (standard library only) in a package of its own, first on the
    program's PYTHONPATH (the OR-Space image has no tcsexam; the harness's own package is not
    the program's to import)."""
    lib = scratch / "lib"
    package = lib / "tcsexam" / "orspace"
    package.mkdir(parents=True, exist_ok=True)
    for init in (lib / "tcsexam" / "__init__.py", package / "__init__.py"):
        init.write_text("")
    shutil.copyfile(result.__file__, package / "result.py")
    shutil.copyfile(capture.__file__, lib / "sitecustomize.py")  # the attribution evidence (capture.py)
    return lib


def program_environment(
    settings: ExecuteSettings, scratch: Path, result_file: Path, root: Path
) -> tuple[dict[str, str], list[str]]:
    """The environment of a program and the paths it may read (besides its scratch folder): the
    interpreter's prefix when it is a host path, the task root, full solver licences."""
    python = settings.interpreter
    host_python = os.sep in python
    path = ([str(Path(python).parent)] if host_python else []) + ["/usr/local/bin", "/usr/bin", "/bin"]
    fixed = {
        "LANG": "C.UTF-8",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONUNBUFFERED": "1",
        "OMP_NUM_THREADS": "1",
        RESULT_ENV: str(result_file),
        "TCSEXAM_TIME_LIMIT": f"{settings.limits.wall_s:g}",
        "PYTHONPATH": str(helper_library(scratch)),
        capture.EVIDENCE_ENV: str(evidence_folder(scratch)),
    }
    env = program_env(str(scratch), path=path, inherit=False, **fixed)
    licence_env, licence_paths = licence_mounts(settings.licences)
    env.update(licence_env)
    # the workspace is read-only too (bwrap hides /tmp, docker mounts only what is named)
    interpreter = {sys.prefix, sys.base_prefix, str(Path(python).resolve().parents[1])} if host_python else set()
    return env, sorted({*interpreter, str(root), *licence_paths})


def evidence_folder(scratch: Path) -> Path:
    """Where the program's `capture` evidence goes (inside its writable scratch)."""
    folder = scratch / "evidence"
    folder.mkdir(exist_ok=True)
    return folder


#: the most of a captured model kept on the record (a larger one is left out, noted as None)
MAX_MODEL_BYTES = 1 << 20


def read_evidence(scratch: Path, root: Path) -> JsonObject:
    """The record's `files_read` (the files under the task root the program opened, relative, in
    the order first opened; None when it left no `opened.json`) and `model_lp` (its last captured
    PuLP/highspy model as LP text; None when none or too large)."""
    folder = scratch / "evidence"
    text = _read(folder / capture.OPENED_FILE, 4 * MAX_MODEL_BYTES)
    files = None
    if text is not None:
        try:
            opened = json.loads(text)
        except json.JSONDecodeError:
            opened = None
        if isinstance(opened, list):
            bases = {str(root) + os.sep, str(root.resolve()) + os.sep}
            files = []
            for path in opened:
                base = next((b for b in bases if isinstance(path, str) and path.startswith(b)), None)
                if base is not None and path[len(base) :] not in files:
                    files.append(path[len(base) :])
    model = _read(folder / capture.MODEL_FILE, MAX_MODEL_BYTES)
    if model is not None and len(model.encode()) > MAX_MODEL_BYTES:
        model = None  # cut short: not a model any more
    return {"files_read": files, "model_lp": model}


def run_workspace(ctx: WorkspaceContext, wid: str) -> WorkspaceRecord:
    """Execute one submission and return its record (never raises for program faults)."""
    settings, workspace = ctx.settings, ctx.workspaces[wid]
    mode = parse_workspace_id(wid)[1]
    limits = settings.limits
    template, entry = ctx.entries[wid]
    not_run = dict(wall_s=0.0, objective=None)
    if template is None:
        return ctx.blank_record(
            wid,
            status="Missing",
            failure_mode=FailureMode.MISSING_OUTPUT,
            message=f"no submission: {entry}",
            solver=UNKNOWN,
            **not_run,
        )
    scratch = Path(make_scratch(ctx.scratch_root, kind="orspace-"))
    made = scratch_identity(scratch)  # checked after the run: still this folder, not replaced
    try:
        copy = scratch / "workspace"
        shutil.copytree(
            workspace,
            copy,
            ignore=shutil.ignore_patterns(*IGNORED_DIRS, *(f"*{s}" for s in IGNORED_SUFFIXES)),
            symlinks=False,
        )
        root = task_root(copy, mode)
        src = root / "src"
        result_file = scratch / "result.json"
        values = {
            "python": settings.interpreter,
            "src": str(src),
            "root": str(root),
            "result_file": str(result_file),
            "time_limit": f"{limits.wall_s:g}",
        }
        argv = _argv(template, values, workspace, entry)
        env, readonly = program_environment(settings, scratch, result_file, root)
        try:
            paths = RunPaths(
                stdout_path=scratch / "stdout.log",
                stderr_path=scratch / "stderr.log",
                readonly_paths=readonly,
                writable_paths=[str(scratch)],
                output_paths=[str(result_file)],
                hidden_paths=ctx.hidden_paths,
            )
            cwd = str(src if src.is_dir() else root)
            outcome = ctx.sandbox.run(RunSpec(argv, cwd, limits, env, paths, settings.run.limiter))
        except LaunchError as exc:
            if not exc.candidate_fault:
                return ctx.infrastructure_record(wid, f"harness could not start the program: {exc}")
            return ctx.blank_record(
                wid,
                status="Error",
                failure_mode=FailureMode.EXECUTION_ERROR,
                message=f"cannot start: {exc}",
                solver=detect_solver(None, "", src),
                **not_run,
            )
        if outcome.sandbox_error:
            return ctx.infrastructure_record(wid, f"sandbox failed: {outcome.sandbox_error}")
        if not scratch_intact(scratch, made):  # the machine's fault, never the program's
            return ctx.infrastructure_record(
                wid, f"the run's scratch folder {scratch} vanished or was replaced while the program ran"
            )
        result_text = _read(result_file, limits.output_bytes)
        exit_ok = outcome.termination == Termination.EXIT and outcome.exit_code == 0
        solver = detect_solver(result_text, f"{outcome.stdout_tail}\n{outcome.stderr_tail}", src)
        derived = derive(result_text, _read(scratch / "stdout.log", limits.output_bytes) or "", exit_ok, solver)
        verdict = outcome_verdict(
            outcome.termination, outcome.exit_code, outcome.signal, derived, limits.wall_s, solver
        )
        return ctx.blank_record(
            wid,
            **{name: getattr(outcome, name) for name in OUTCOME_FIELDS},
            status_source=derived["status_source"],
            solver=solver,
            **verdict,
            **read_evidence(scratch, root),
        )
    finally:
        release_scratch(scratch)


def _read(path: Path, limit: int) -> str | None:
    """A file the program could have written or replaced (its result file, stdout in its writable
    scratch), read with `read_untrusted`: None when absent, unreadable, or not a regular file (a
    link, a FIFO: never followed, never waited on)."""
    try:
        data = read_untrusted(path, limit)
    except (OSError, UntrustedFileError):
        return None
    return None if data is None else data.decode("utf-8", "replace")


def checked_entries(found: dict[str, Path]) -> dict[str, tuple[list[str] | None, str]]:
    """find_entry's answer per workspace; a bad submission.yaml is the user's input: one error
    before anything runs."""
    entries = {wid: find_entry(path, parse_workspace_id(wid)[1]) for wid, path in found.items()}
    for wid, (template, entry) in entries.items():
        if template is not None:
            _argv(
                template, dict.fromkeys(("python", "src", "root", "result_file", "time_limit"), ""), found[wid], entry
            )
    return entries


def orspace_sandbox(name: str, docker_image: str | None = None, allow_unsandboxed: bool = False) -> tuple[Sandbox, str]:
    """`choose_sandbox`, as every command chooses its sandbox, with OR-Space's default for the
    docker sandbox's image (`RunOptions.docker_image`): the one asked for, else
    $TCSEXAM_ORSPACE_IMAGE, else the OR-Space image when present, else the sandbox's own default
    (the Solver track's candidate image)."""
    if name != SandboxName.DOCKER:  # `auto` (which tries docker with its default image) or no image
        return choose_sandbox(name, allow_unsandboxed=allow_unsandboxed, docker_image=docker_image)
    wanted = docker_image or os.environ.get("TCSEXAM_ORSPACE_IMAGE")
    if wanted:
        box, why = choose_sandbox(name, docker_image=wanted)
        return box, f"{why} (image {wanted})"
    try:
        box, why = choose_sandbox(name, docker_image=DEFAULT_ORSPACE_IMAGE)
        return box, f"{why} (image {DEFAULT_ORSPACE_IMAGE})"
    except InputError:
        box, why = choose_sandbox(name)
        return (
            box,
            f"{why} (no {DEFAULT_ORSPACE_IMAGE}: image {box.image_name}, which may lack the solvers: make orspace-image)",
        )


def execute(workspaces_root: Path, out_dir: Path, settings: ExecuteSettings, **options: Any) -> JsonObject:
    """Run every selected submission (`modes`, `workspace_ids`; `progress` gets each line); returns
    a summary. Writes records and predictions.jsonl. One run per output folder at a time: a
    second one on the same `out_dir` stops at once with one line (`fileio.exclusive_use`)."""
    with contextlib.ExitStack() as hold:  # the lock is taken once the input is checked
        return _execute(workspaces_root, Path(out_dir), settings, hold=hold, **options)


def _execute(
    workspaces_root: Path,
    out_dir: Path,
    settings: ExecuteSettings,
    *,
    modes: tuple[Mode, ...] = OBJECTIVE_MODES,
    workspace_ids: list[str] | None = None,
    progress: Callable[[str], None] | None = None,
    condition: str | None = None,
    hold: contextlib.ExitStack,
) -> JsonObject:
    """`condition`: the stage condition's slug when the folder has no stage manifest saying it.
    The steps of the batch engine (`runner.engine.batch`): prepare, keys, reuse, batch, summary."""
    found = _selected(workspaces_root, modes, workspace_ids)
    _check_settings(settings)
    entries = checked_entries(found)
    settings, image, sandbox = _resolved(settings, progress)
    condition = staged_condition(workspaces_root, condition)
    keys = {wid: workspace_key(path, settings, condition, image) for wid, path in found.items()}
    hold.enter_context(exclusive_use([(out_dir / "records", True)]))
    seal_key = ensure_key(out_dir, near=out_dir / "records")
    batch = KeyedBatch.open(RecordStore(out_dir / "records", WorkspaceRecord, key=seal_key), keys)
    if progress is not None:
        for wid, reason, detail in batch.set_aside:
            progress(f"{wid}: record set aside ({reason}: {detail}) into {batch.store.set_aside_dir}; it runs again")
        batch.on_write = _progress_lines(progress, len(batch.pending), batch)
    hidden = tuple(sorted({str(Path(out_dir).resolve()), str(seal_key.path.parent)}))
    ctx = WorkspaceContext(settings, found, keys, entries, sandbox, condition=condition, hidden_paths=hidden)
    pool = settings.run.pool
    if pool.workers == 1 or len(batch.pending) <= 1:  # one at a time: in this process (no Ray start)
        pool = dataclasses.replace(pool, workers=1, use_ray=False, ray_address=None, ray_head=None)
    hooks = BatchHooks(
        label="orspace execute",
        log=progress,
        progress=settings.run.progress,
        failed=lambda record: record.failure_mode is not None,
    )
    run_batch(ctx, batch, pool, hooks)
    return _summary(batch, out_dir, condition)


def _selected(workspaces_root: Path, modes: tuple[Mode, ...], workspace_ids: list[str] | None) -> dict[str, Path]:
    found = discover_workspaces(workspaces_root, modes)
    if workspace_ids:
        unknown = [w for w in workspace_ids if w not in found]
        if unknown:
            raise InputError(f"{workspaces_root}: no workspace {unknown[0]}")
        found = {w: p for w, p in found.items() if w in set(workspace_ids)}
    if not found:
        raise InputError(f"{workspaces_root}: no {'/'.join(modes)} workspaces found")
    return found


def _check_settings(settings: ExecuteSettings) -> None:
    try:
        licence_mounts(settings.licences)
    except (ValueError, FileNotFoundError) as exc:
        raise InputError(str(exc)) from None


def _resolved(
    settings: ExecuteSettings, progress: Callable[[str], None] | None
) -> tuple[ExecuteSettings, str | None, Sandbox]:
    """(the settings with the sandbox chosen, its image and the programs' interpreter; the id of
    the image it runs, None without one: a new image reruns; the sandbox, checked to work here)."""
    sandbox, why = orspace_sandbox(settings.run.sandbox, settings.run.docker_image, settings.run.allow_unsandboxed)
    if progress is not None:
        progress(why)
    # `auto` resolved: keys name the real one; a sandbox with its own Python runs its python3 by default
    python = settings.python or sandbox.candidate_python
    run = dataclasses.replace(settings.run, sandbox=sandbox.name)
    resolved = dataclasses.replace(
        settings, run=dataclasses.replace(run, docker_image=sandbox.image_name), python=python
    )
    return resolved, sandbox.image_id(), sandbox


def _progress_lines(progress: Callable[[str], None], todo: int, batch: KeyedBatch) -> Callable[[str, Any], None]:
    """`on_write` of the batch: one line per finished workspace, with the failures and an ETA."""
    started = time.monotonic()
    failures = 0

    def on_write(wid: str, record: WorkspaceRecord) -> None:
        nonlocal failures
        failures += record.failure_mode is not None
        done = batch.executed
        eta = (time.monotonic() - started) / done * (todo - done)
        progress(
            f"[{done}/{todo}] {wid}: {record.status} ({record.failure_mode or 'ok'}); failures {failures}; ETA {eta:.0f} s"
        )

    return on_write


def _summary(batch: KeyedBatch, out_dir: Path, condition: str | None) -> JsonObject:
    """Refuse harness failures (a rerun retries them); write predictions.jsonl; the summary."""
    records = batch.results
    infra = sorted(w for w, r in records.items() if r.infrastructure_error)
    if infra:
        raise InputError(
            f"{len(infra)} workspace(s) hit a harness failure, first {infra[0]}: "
            f"{records[infra[0]].message}; rerun to retry them (records in {batch.store.dir})"
        )
    lines = [json.dumps(r.prediction()) for _, r in sorted(records.items())]
    atomic_write_text(out_dir / "predictions.jsonl", "\n".join(lines) + "\n")
    failure_modes: dict[str, int] = {}
    for r in records.values():
        if r.failure_mode:
            failure_modes[str(r.failure_mode)] = failure_modes.get(str(r.failure_mode), 0) + 1
    return {
        "workspaces": len(records),
        "executed": batch.executed,
        "reused": batch.reused,
        "failure_modes": failure_modes,
        "set_aside": len(batch.set_aside),
        "condition": condition,
    }
