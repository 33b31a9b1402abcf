"""The Inspect sandbox environment `tcsexam`: an agent's commands run in the project's own sandboxes.

One environment per sample. `sample_init` makes a scratch folder owned by this run
(`runner.ownership.scratch`) and in it the agent's copy of the staged workspace (`workspace.copy_in`:
only the audited files of the stage manifest, so the oracle, rubrics and metrics never enter).
Every `exec` is one run of `runner.sandboxes` (`auto`: bwrap, then docker, then apptainer; never
`local` unless the candidates are declared trusted), exactly as a candidate's program runs:

- no network, a read-only system, the workspace copy the only writable folder (HOME and TMPDIR
  are the sandbox's private /tmp, gone after the call); the staged folder, the release and
  oracle its manifest names, the tcsexam checkout and the run's output hidden (`hidden_paths`);
- the limits of every call (`AgentSandboxConfig`: wall clock, memory, processes, output, disk)
  enforced by the project's limiter, which kills the whole process tree at the end of the call:
  nothing the agent starts outlives its call, so nothing outlives the sample; a call's wall
  clock is at most what its sample has left of its time and working limits;
- the interpreter of `orspace execute` (this Python, with PuLP/CBC, highspy, gurobipy and
  coptpy; under docker the OR-Space image's), the result helpers (`tcsexam.orspace.result`) on
  PYTHONPATH, `ORSPACE_RESULT_FILE` and `TCSEXAM_TIME_LIMIT` set, full solver licences mounted
  read-only when given.

A limit reached is reported in the call's stderr (`[tcsexam sandbox: ...]`, so the transcript
shows it) and exit code; a sandbox that fails to start is an infrastructure failure
(`SandboxInfrastructureError`: the sample errors and is rerun, never scored). `read_file` and
`write_file` are confined to the workspace copy (`workspace.read_confined`/`write_confined`).
`sample_cleanup` copies the worked workspace to the sample's `incoming_dir` and removes the scratch.
"""

from __future__ import annotations

import itertools
import os
import shutil
import sys
import threading
from pathlib import Path
from typing import Any, Literal, overload

import anyio
from inspect_ai.util import (
    ExecResult,
    OutputLimitExceededError,
    SandboxEnvironment,
    SandboxEnvironmentConfigType,
    SandboxUserUnsupportedError,
    sample_limits,
    sandbox,
    sandboxenv,
)
from inspect_ai.util._sandbox.environment import RootAccess
from pydantic import BaseModel

from tcsexam.containment import Limiter, SandboxName
from tcsexam.errors import InputError
from tcsexam.fileio import Json, JsonObject
from tcsexam.orspace.execute import helper_library, orspace_sandbox
from tcsexam.orspace.result import RESULT_ENV
from tcsexam.orspace.solvers import licence_mounts
from tcsexam.records import Termination
from tcsexam.runner.limiter import LaunchError, Limits, MiB, RunPaths, RunSpec, resolve_limiter
from tcsexam.runner.limiter.launcher import SAFE_PATH
from tcsexam.runner.ownership.scratch import make_scratch, release_scratch
from tcsexam.runner.sandboxes.base import Sandbox
from tcsexam.runner.sandboxes.runas import candidate_ids, give_to
from tcsexam.runner.solver.candidate import program_env

from . import workspace as ws

SANDBOX_TYPE = "tcsexam"
NOTE = "[tcsexam sandbox:"  #: how the sandbox's own lines in a call's stderr start
#: what a call returns of each stream at most (Inspect truncates tool output further)
RETURNED_BYTES = 1 * MiB
READ_LIMIT = 100 * MiB  #: the largest file `read_file` returns (Inspect's own default)
#: the per-sample metadata the environment reads
META_STAGED, META_WID, META_INCOMING = "staged_dir", "workspace_id", "incoming_dir"


class SandboxInfrastructureError(RuntimeError):
    """The project's sandbox could not run a call (it failed to start, the harness could not
    launch the shell): the machine's failure, never the agent's. The sample errors; a rerun
    generates it again."""


class AgentSandboxConfig(BaseModel, frozen=True):
    """How every call of an agent runs (`tcsexam agents generate` options of the same names)."""

    sandbox: SandboxName = SandboxName.AUTO  #: auto|bwrap|docker|apptainer|local (local only with allow_unsandboxed)
    allow_unsandboxed: bool = False
    limiter: Limiter = Limiter.AUTO
    call_time_s: float = 120.0  #: wall-clock limit of one call
    call_mem_mb: int = 4096
    call_nproc: int = 256  #: processes and threads alive at once
    call_output_mb: int = 64  #: stdout, stderr and every file one call writes
    workspace_mb: int = 1024  #: what the workspace copy may hold
    python: str | None = None  #: the agent's `python3` (None: `orspace execute`'s default)
    licences: tuple[tuple[str, str], ...] = ()  #: (solver, full licence path) pairs, mounted read-only
    docker_image: str | None = None
    scratch_root: str | None = None  #: parent of the per-sample scratch folders (None: $TMPDIR)
    #: host folders the agent must not see (the run's output, logs); the stage's release and
    #: oracle, the staged folder and the tcsexam checkout are hidden always (`hidden_paths`)
    hidden: tuple[str, ...] = ()

    def call_limits(self, timeout: float | None = None) -> Limits:
        wall = min(float(timeout), self.call_time_s) if timeout else self.call_time_s
        return Limits(
            wall_s=wall,
            mem_mb=self.call_mem_mb,
            output_bytes=self.call_output_mb * MiB,
            nproc=self.call_nproc,
            disk_mb=self.workspace_mb,
        )


_boxes: dict[tuple[Any, ...], tuple[Sandbox, str]] = {}
_boxes_lock = threading.Lock()


def resolve_sandbox(config: AgentSandboxConfig) -> tuple[Sandbox, str]:
    """(the project sandbox `config.sandbox` names, checked to work here; one line saying which),
    once per process; InputError with one line when none works (`orspace execute`'s rule)."""
    key = (config.sandbox, config.docker_image, config.allow_unsandboxed)
    with _boxes_lock:
        if key not in _boxes:
            _boxes[key] = orspace_sandbox(config.sandbox, config.docker_image, config.allow_unsandboxed)
        return _boxes[key]


def _termination_note(outcome) -> str:
    """The line a call's stderr gets when it did not simply exit."""
    if outcome.termination == Termination.EXIT:
        return ""
    words = outcome.message or str(outcome.termination)
    return f"\n{NOTE} the command was stopped: {words}; every process it started was ended]\n"


def _read_capped(path: Path, cap: int = RETURNED_BYTES) -> str:
    try:
        with open(path, "rb") as fh:
            data = fh.read(cap + 1)
    except FileNotFoundError:
        return ""
    text = data[:cap].decode("utf-8", "replace")
    return text + (f"\n{NOTE} output truncated at {cap} bytes]\n" if len(data) > cap else "")


@sandboxenv(name=SANDBOX_TYPE)
class TcsexamSandbox(SandboxEnvironment):
    """One sample's workspace copy and the project sandbox its calls run in."""

    def __init__(self, config: AgentSandboxConfig, box: Sandbox, scratch: Path, metadata: JsonObject):
        super().__init__()
        # exec as another user is refused: decided here, no probe needed
        self._root_access = RootAccess("unusable", "tcsexam sandbox: commands run only as the agent's own user")
        self.config, self.box, self.scratch, self.metadata = config, box, scratch, dict(metadata)
        self.workspace = scratch / "workspace"
        self.calls = scratch / "calls"  # stdout, stderr and stdin of each call: the harness's, never mounted
        self.isolated_tmp = box.isolates_files  # bwrap, docker, apptainer: a private /tmp per call
        self.home = Path("/tmp") if self.isolated_tmp else scratch / "home"
        self._counter = itertools.count(1)
        self.lib = helper_library(scratch)
        self.python = config.python or box.candidate_python
        self.hidden = hidden_paths(config, metadata)
        self.prlimit = nproc_wrapper(box, config.limiter)

    # -- lifecycle ---------------------------------------------------------------------------------

    @classmethod
    def config_deserialize(cls, config: JsonObject) -> BaseModel:
        return AgentSandboxConfig(**config)

    @classmethod
    def default_concurrency(cls) -> int | None:
        return os.cpu_count() or 1

    @classmethod
    async def task_init(cls, task_name: str, config: SandboxEnvironmentConfigType | None) -> None:
        await anyio.to_thread.run_sync(resolve_sandbox, _config(config))

    @classmethod
    async def sample_init(
        cls, task_name: str, config: SandboxEnvironmentConfigType | None, metadata: dict[str, str]
    ) -> dict[str, SandboxEnvironment]:
        return {"default": await anyio.to_thread.run_sync(_make_environment, _config(config), dict(metadata))}

    @classmethod
    async def sample_cleanup(
        cls,
        task_name: str,
        config: SandboxEnvironmentConfigType | None,
        environments: dict[str, SandboxEnvironment],
        interrupted: bool,
    ) -> None:
        for environment in environments.values():
            if isinstance(environment, TcsexamSandbox):
                with anyio.CancelScope(shield=True):
                    await anyio.to_thread.run_sync(environment.finish)

    def finish(self) -> None:
        """Copy the worked workspace to the sample's `incoming_dir` (replacing an earlier try's),
        then remove the scratch folder. No process of the sample is left: each call ended its own."""
        try:
            incoming = self.metadata.get(META_INCOMING)
            if incoming:  # copied whole or not at all: a partial copy never passes for the agent's work
                dest, part = Path(incoming), Path(f"{incoming}.part")
                shutil.rmtree(part, ignore_errors=True)
                skipped = ws.copy_out(self.workspace, part)
                Path(f"{incoming}.left-out").write_text("".join(f"{rel}\n" for rel in skipped))
                shutil.rmtree(dest, ignore_errors=True)
                os.replace(part, dest)
        finally:
            release_scratch(self.scratch)

    # -- calls -------------------------------------------------------------------------------------

    async def exec(
        self,
        cmd: list[str],
        input: str | bytes | None = None,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        user: str | None = None,
        timeout: int | None = None,
        timeout_retry: bool = True,
        concurrency: bool = True,
    ) -> ExecResult[str]:
        if user is not None:
            raise SandboxUserUnsupportedError(f"tcsexam sandbox: cannot run as {user!r}; commands run as the agent")
        left = _sample_time_left()  # a call never outlasts its sample's time or working limit
        wall = min(x for x in (timeout, left, self.config.call_time_s) if x is not None)
        # not abandoned on cancellation: the call (bounded by its wall limit) ends, and its tree with it
        result, stopped = await anyio.to_thread.run_sync(self.run_call, list(cmd), input, cwd, env or {}, wall)
        if stopped and timeout is not None and wall == timeout:
            raise TimeoutError(f"the command exceeded its {timeout} s timeout")
        return result

    def run_call(
        self, cmd: list[str], stdin: str | bytes | None, cwd: str | None, env: dict[str, str], timeout: float | None
    ) -> tuple[ExecResult[str], bool]:
        """One call in the project sandbox under the call limits, its wall clock at most `timeout`:
        (its result, whether the wall clock ended it)."""
        n = next(self._counter)
        self.calls.mkdir(mode=0o700, exist_ok=True)
        out, err = self.calls / f"{n}.out", self.calls / f"{n}.err"
        limits = self.config.call_limits(timeout)
        environment, readonly, writable = self._environment(limits)
        environment.update(env)
        argv = list(cmd)
        if self.prlimit is not None:  # the process limit enforced by the kernel too (see `nproc_wrapper`)
            argv = [self.prlimit, f"--nproc={limits.nproc}", "--", *argv]
        feed: Path | None = None
        if stdin is not None:  # a file of the harness's, read-only inside, the program's stdin
            feed = self.scratch / "stdin" / str(n)
            feed.parent.mkdir(mode=0o755, exist_ok=True)
            feed.write_bytes(stdin.encode() if isinstance(stdin, str) else stdin)
            readonly.append(str(feed))
            argv = ["/bin/sh", "-c", f'exec "$0" "$@" < {feed}', *argv]
        where = self.workspace.joinpath(*ws.workspace_parts(self.workspace, cwd)) if cwd else self.workspace
        paths = RunPaths(
            stdout_path=out,
            stderr_path=err,
            readonly_paths=readonly,
            writable_paths=writable,
            hidden_paths=self.hidden,
        )
        try:
            outcome = self.box.run(RunSpec(argv, str(where), limits, environment, paths, self.config.limiter))
        except LaunchError as exc:
            if not exc.candidate_fault:
                raise SandboxInfrastructureError(f"tcsexam sandbox: the call could not start: {exc}") from None
            return ExecResult(False, 127, "", f"cannot run {cmd[0] if cmd else ''}: {exc}\n"), False
        finally:
            if feed is not None:
                feed.unlink(missing_ok=True)
        if outcome.sandbox_error:
            raise SandboxInfrastructureError(f"tcsexam sandbox {self.box.name}: {outcome.sandbox_error}")
        stdout, stderr = _read_capped(out), _read_capped(err) + _termination_note(outcome)
        out.unlink(missing_ok=True)
        err.unlink(missing_ok=True)
        if outcome.termination == Termination.WALLTIME and timeout is not None:
            return ExecResult(False, 124, stdout, stderr), True
        code = outcome.exit_code
        if code is None:
            code = 128 + outcome.signal if outcome.signal else 137
        return ExecResult(outcome.termination == Termination.EXIT and code == 0, code, stdout, stderr), False

    def _environment(self, limits: Limits) -> tuple[dict[str, str], list[str], list[str]]:
        """(the call's environment, its read-only paths, its writable paths)."""
        host_python = os.sep in self.python
        path = ([str(Path(self.python).parent)] if host_python else []) + ["/usr/local/bin", "/usr/bin", "/bin"]
        writable = [str(self.workspace)]
        if not self.isolated_tmp:
            self.home.mkdir(mode=0o700, exist_ok=True)
            writable.append(str(self.home))
        env = program_env(
            str(self.home),
            path=path,
            inherit=False,
            LANG="C.UTF-8",
            PYTHONDONTWRITEBYTECODE="1",
            PYTHONUNBUFFERED="1",
            OMP_NUM_THREADS="1",
            PYTHONPATH=str(self.lib),
            TCSEXAM_TIME_LIMIT=f"{limits.wall_s:g}",
            **{RESULT_ENV: str(self.home / "orspace_result.json")},
        )
        licence_env, licence_paths = licence_mounts(dict(self.config.licences))
        env.update(licence_env)
        interpreter = (
            {sys.prefix, sys.base_prefix, str(Path(self.python).resolve().parents[1])} if host_python else set()
        )
        return env, sorted({*interpreter, str(self.lib), *licence_paths}), writable

    # -- files -------------------------------------------------------------------------------------

    async def write_file(self, file: str, contents: str | bytes) -> None:
        data = contents.encode("utf-8") if isinstance(contents, str) else contents
        await anyio.to_thread.run_sync(ws.write_confined, self.workspace, file, data, candidate_ids())

    @overload
    async def read_file(self, file: str, text: Literal[True] = True) -> str: ...

    @overload
    async def read_file(self, file: str, text: Literal[False]) -> bytes: ...

    async def read_file(self, file: str, text: bool = True) -> str | bytes:
        try:
            data = await anyio.to_thread.run_sync(ws.read_confined, self.workspace, file, READ_LIMIT)
        except OverflowError:
            raise OutputLimitExceededError(limit_str=f"{READ_LIMIT // MiB} MiB", truncated_output=None) from None
        return data.decode("utf-8") if text else data


def nproc_wrapper(box: Sandbox, limiter: Limiter) -> str | None:
    """`prlimit` (util-linux), to set RLIMIT_NPROC in every call, where the limiter alone would only
    poll the process count (`light`: no cgroups, e.g. any unprivileged harness) and the sandbox
    gives each call a user namespace of its own (bwrap as an unprivileged user): there the kernel
    counts the call's own processes and threads only, so an unbounded fork fails at the limit
    instead of flooding the machine between two polls. None elsewhere: cgroups (pids) and Docker
    (`pids_limit`) enforce it, and as root the candidate uid is shared, so the count would be too."""
    if box.name != SandboxName.BWRAP or candidate_ids() is not None or resolve_limiter(limiter) != Limiter.LIGHT:
        return None
    return shutil.which("prlimit", path=SAFE_PATH)


def _sample_time_left() -> float | None:
    """Seconds the running sample has left of its time and working limits (None: no limit, or
    no sample), at least one."""
    try:
        limits = sample_limits()
    except RuntimeError:
        return None
    left = [x for x in (limits.time.remaining, limits.working.remaining) if x is not None]
    return max(1.0, min(left)) if left else None


def checkout_root() -> Path | None:
    """The source tree tcsexam runs from, when it runs from one (its demo oracle, its solutions)."""
    root = Path(__file__).resolve().parents[3]
    return root if (root / "pyproject.toml").is_file() and (root / "src" / "tcsexam").is_dir() else None


def hidden_paths(config: AgentSandboxConfig, metadata: JsonObject) -> tuple[str, ...]:
    """What the agent's calls never see (bwrap: an empty folder in its place; the container
    sandboxes mount only what a call names anyway): `config.hidden`, the staged folder, the
    release and the oracle its manifest names, and the tcsexam checkout. The interpreter and the
    sample's own folders stay reachable inside them (bound after the hiding)."""
    staged = Path(str(metadata.get(META_STAGED)))
    manifest = ws.stage_manifest(staged)
    named = [manifest.get("release"), manifest.get("oracle"), staged, checkout_root(), *config.hidden]
    return tuple(sorted({str(Path(str(p)).resolve()) for p in named if p}))


def _config(config: SandboxEnvironmentConfigType | dict[str, Json] | None) -> AgentSandboxConfig:
    """The sandbox's configuration from what Inspect hands over: Inspect declares BaseModel or str,
    but hands the undecoded mapping over where it found no `config_deserialize` to decode it."""
    if config is None:
        return AgentSandboxConfig()
    if isinstance(config, AgentSandboxConfig):
        return config
    if isinstance(config, dict):
        return AgentSandboxConfig(**config)
    raise InputError(f"tcsexam sandbox: unusable configuration {config!r} (an AgentSandboxConfig)")


def _make_environment(config: AgentSandboxConfig, metadata: JsonObject) -> TcsexamSandbox:
    """A sample's environment: its scratch folder and workspace copy (only the audited files)."""
    box, _ = resolve_sandbox(config)
    staged, wid = metadata.get(META_STAGED), metadata.get(META_WID)
    if not staged or not wid:
        raise InputError(f"tcsexam sandbox: a sample needs metadata {META_STAGED} and {META_WID}")
    scratch = Path(make_scratch(config.scratch_root, kind="agent-"))
    try:
        ws.copy_in(Path(staged), ws.stage_manifest(staged), str(wid), scratch / "workspace")
        environment = TcsexamSandbox(config, box, scratch, metadata)
        give_to([str(environment.workspace)], candidate_ids())
        return environment
    except BaseException:
        release_scratch(scratch)
        raise


def current_workspace() -> Path:
    """The host path of the running sample's workspace copy (the same path inside its sandbox)."""
    return sandbox().as_type(TcsexamSandbox).workspace
