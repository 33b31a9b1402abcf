"""One candidate on one instance: load the candidate, build it once, run it under the limits in a
sandbox, check its certificate, and map everything to an instance record.

Candidate (`solver.yaml`)::

    command: ["python3", "solve.py", "{instance}", "{solution}"]  # required, non-empty strings
    build: ["make"]            # optional, run once per attempt in a copy of the folder
    threads: 1                 # optional, CPUs reserved per run (int >= 1)
    env: {OMP_NUM_THREADS: "1"}  # optional extra environment (string values)
    exit_codes_ok: [0, 10, 20]  # optional, exit codes that are not crashes (default [0])
    tasks:                     # optional, a task's own command when one folder serves several tasks
      tsp-random: {command: ["python3", "solve.py", "{instance}", "{solution}", "0.6", "{seed}"]}

Placeholders: {instance} {solution} {time_limit} {seed} {threads} {workdir} {trace_dir} ({{ and }}
for braces; {trace_dir} is `{workdir}/trace`, watched on anytime tasks: `tcsexam.runner.anytime`).
The command runs with the candidate folder as working directory; `{workdir}` is the run's private
writable scratch directory (also TMPDIR and HOME) and `{solution}` a file in it. The environment is
minimal (PATH with the harness's Python first, LANG/LC_*, TZ, USER) plus TCSEXAM_TIME_LIMIT,
TCSEXAM_SEED, TCSEXAM_THREADS, OMP_NUM_THREADS=threads and the candidate's `env`, whose loader,
glibc and shell start-up variables (`ENV_DENIED`) and relative or in-folder PATH entries are
refused when the candidate is loaded. A root harness runs the candidate as an unprivileged uid
(`sandboxes.runas`): its work folder is its own, its instance and folder readable copies where
the originals are out of its reach.

Status mapping (DESIGN.md): wall or CPU limit -> timeout (even when a certificate is there);
memory -> memout; output over the cap -> crash (termination "output"); a process-count overrun ->
crash (termination "nproc"); non-zero exit not in `exit_codes_ok` or a signal the harness did not
send -> crash; a program that cannot be started -> invalid; no certificate -> invalid; otherwise the
problem module's verdict (ok, invalid, certificate_failed). A failing harness (sandbox did not
start, launch error that is not the candidate's, checker raising) -> infrastructure_error.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import shutil
import string
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tcsexam import HARNESS_VERSION
from tcsexam.errors import InputError
from tcsexam.fileio import UntrustedFileError, read_untrusted, read_yaml, special_files
from tcsexam.records import InstanceRecord, Status
from tcsexam.runner import anytime
from tcsexam.runner.limiter import LaunchError, Limits, ProcessOutcome, Termination
from tcsexam.runner.sandboxes import run_limited
from tcsexam.runner.sandboxes.runas import can_read, candidate_ids, readable_copy
from tcsexam.schemas import check

PLACEHOLDERS = frozenset({"instance", "solution", "time_limit", "seed", "threads", "workdir", "trace_dir"})
ENV_PASS = ("LANG", "LANGUAGE", "TZ", "USER", "LOGNAME", "TERM")
#: `env` keys a solver.yaml may not set: the dynamic loader's and glibc's (the variables glibc
#: itself ignores for setuid programs), the shells' start-up files, and what the harness sets
ENV_DENIED = ("LD_*", "DYLD_*", "GCONV_PATH", "GETCONF_DIR", "GLIBC_TUNABLES", "HOSTALIASES", "LOCALDOMAIN",
              "LOCPATH", "MALLOC_*", "NIS_PATH", "NLSPATH", "RESOLV_HOST_CONF", "RES_OPTIONS", "TZDIR", "BASH_ENV",
              "ENV", "TMPDIR", "HOME", "TCSEXAM_*")  # fmt: skip
SOLUTION_NAME = "solution"
MESSAGE_MAX = 500


@dataclass(frozen=True)
class Candidate:
    dir: Path
    command: tuple[str, ...]
    build: tuple[str, ...] | None = None
    threads: int = 1
    env: dict[str, str] = field(default_factory=dict, hash=False)
    exit_codes_ok: frozenset[int] = frozenset({0})
    source: Path | None = None


def _placeholders(arg: str, where: str) -> None:
    try:
        fields = [f for _, f, _, _ in string.Formatter().parse(arg) if f is not None]
    except ValueError as exc:
        raise InputError(f"{where}: bad braces in {arg!r}: {exc}") from None
    for name in fields:
        if name not in PLACEHOLDERS:
            known = " ".join("{" + p + "}" for p in sorted(PLACEHOLDERS))
            raise InputError(f"{where}: unknown placeholder {{{name}}} in {arg!r}; known: {known}")


def _argv(value: list[str], key: str, path: Path) -> tuple[str, ...]:
    for arg in value:
        _placeholders(arg, f"{path}: {key!r}")
    return tuple(value)


def load_candidate(directory: str | os.PathLike, task: str | None = None) -> Candidate:
    """Read `<directory>/solver.yaml` and validate it (schema `solver`, then its placeholders);
    InputError naming the file and key. A folder that serves several tasks may give one of them
    its own command (`tasks: {TASK: {command: [...]}}`); `task` selects it."""
    directory = Path(directory).resolve()
    path = directory / "solver.yaml"
    if not directory.is_dir():
        raise InputError(f"{directory}: candidate folder not found")
    data = read_yaml(path, "candidate solver.yaml")
    check(data, "solver", path)
    for name, override in (data.get("tasks") or {}).items():
        _argv(override["command"], f"tasks.{name}.command", path)
    command = _argv(data["command"], "command", path)
    if task is not None and task in (data.get("tasks") or {}):
        command = tuple(data["tasks"][task]["command"])
    build = _argv(data["build"], "build", path) if data.get("build") is not None else None
    threads = data.get("threads", 1)
    env = data.get("env") or {}
    _check_env({k: str(v) for k, v in env.items()}, path, directory)
    codes = data.get("exit_codes_ok", [0])
    return Candidate(
        dir=directory,
        command=command,
        build=build,
        threads=threads,
        env={k: str(v) for k, v in env.items()},
        exit_codes_ok=frozenset(codes),
        source=path,
    )


def _check_env(env: dict[str, str], path: Path, directory: Path) -> None:
    """InputError (one line naming the file and key) for an `env` key on the deny list
    (`ENV_DENIED`) or a PATH entry that is relative or inside the candidate folder."""
    import fnmatch

    for key in env:
        if any(fnmatch.fnmatchcase(key, pattern) for pattern in ENV_DENIED):
            raise InputError(
                f"{path}: 'env' may not set {key} (denied: loader, glibc and shell start-up variables and the "
                f"harness's own: {' '.join(ENV_DENIED)})"
            )
    for entry in env.get("PATH", "/").split(os.pathsep):
        inside = os.path.isabs(entry) and _within(Path(os.path.normpath(entry)), directory)
        if not os.path.isabs(entry) or inside:
            what = "inside the candidate folder" if inside else "relative (or empty)"
            raise InputError(
                f"{path}: 'env' PATH entry {entry!r} is {what}; PATH entries must be absolute system folders"
            )


def _within(path: Path, folder: Path) -> bool:
    try:
        resolved = path.resolve()
    except OSError:
        resolved = path
    return any(p == folder or folder in p.parents for p in (path, resolved))


def candidate_env(candidate: Candidate, *, time_limit: float, seed: int, workdir: str,
                  python_dir: str | None = None) -> dict[str, str]:  # fmt: skip
    """The minimal environment a candidate runs with (see the module doc): HOME and TMPDIR are
    the run's private work folder; `python_dir` (default: the harness's interpreter folder) comes
    first on PATH."""
    env = {k: os.environ[k] for k in ENV_PASS if k in os.environ}
    env.update({k: v for k, v in os.environ.items() if k.startswith("LC_")})
    here = python_dir or os.path.dirname(sys.executable)
    path = os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin")
    kept = [p for p in path.split(os.pathsep) if os.path.isabs(p) and p != here]
    env["PATH"] = os.pathsep.join([here, *kept])
    env["HOME"] = workdir
    env["TMPDIR"] = workdir
    env["OMP_NUM_THREADS"] = str(candidate.threads)
    env.update(candidate.env)
    env["TCSEXAM_TIME_LIMIT"] = _fmt_seconds(time_limit)
    env["TCSEXAM_SEED"] = str(seed)
    env["TCSEXAM_THREADS"] = str(candidate.threads)
    return env


def _box(sandbox):
    """`sandbox` (a name or a Sandbox) as a Sandbox."""
    from tcsexam.runner.sandboxes import get_sandbox

    return get_sandbox(sandbox) if isinstance(sandbox, str) else sandbox


def _python_dir(sandbox) -> str | None:
    """The interpreter folder the candidate sees under `sandbox` (a name or a Sandbox)."""
    box = _box(sandbox)
    return box.python_dir() if hasattr(box, "python_dir") else None


def _fmt_seconds(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(float(x))


def format_command(argv, values: dict[str, Any]) -> list[str]:
    return [arg.format_map(values) for arg in argv]


def build_candidate(
    candidate: Candidate,
    *,
    sandbox: Any,
    limits: Limits,
    build_dir: str | os.PathLike,
    log_path: str | os.PathLike,
) -> tuple[Candidate | None, str]:
    """Run the candidate's `build` once in a copy at `build_dir` (replaced), output to `log_path`.
    Returns (the built candidate rooted at build_dir, message) or (None, why it failed)."""
    if not candidate.build:
        return candidate, "no build step"
    build_dir = Path(build_dir).resolve()
    log_path = Path(log_path).resolve()
    if build_dir.exists():
        shutil.rmtree(build_dir)
    build_dir.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(candidate.dir, build_dir, symlinks=True, ignore=special_files)
    values = {
        "instance": "",
        "solution": "",
        "time_limit": _fmt_seconds(limits.wall_s),
        "seed": "0",
        "threads": str(candidate.threads),
        "workdir": str(build_dir),
        "trace_dir": "",
    }
    argv = format_command(candidate.build, values)
    env = candidate_env(candidate, time_limit=limits.wall_s, seed=0, workdir=str(build_dir),
                        python_dir=_python_dir(sandbox))  # fmt: skip
    try:
        outcome = run_limited(
            argv,
            cwd=build_dir,
            limits=limits,
            sandbox=sandbox,
            env=env,
            stdout_path=log_path,
            stderr_path=log_path,
            writable_paths=(build_dir,),
        )
    except LaunchError as exc:
        with open(log_path, "a", encoding="utf-8") as fh:
            fh.write(f"\n[tcsexam] {exc}\n")
        return None, f"build command {' '.join(argv)!r} could not start: {exc}"
    what = f"build {' '.join(argv)!r}"
    if outcome.sandbox_error:
        return None, f"{what}: sandbox failed: {outcome.sandbox_error}"
    if outcome.termination != "exit" or outcome.exit_code != 0:
        reason = outcome.message or (
            f"exit code {outcome.exit_code}" if outcome.exit_code is not None else f"signal {outcome.signal}"
        )
        return None, f"{what} failed ({outcome.termination}: {reason}) after {outcome.wall_s:.1f} s"
    return (
        Candidate(
            dir=build_dir,
            command=candidate.command,
            build=candidate.build,
            threads=candidate.threads,
            env=dict(candidate.env),
            exit_codes_ok=candidate.exit_codes_ok,
            source=candidate.source,
        ),
        f"built in {outcome.wall_s:.1f} s",
    )


def _short(text: str, limit: int = MESSAGE_MAX) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else "..." + text[-(limit - 3) :]


def _read_certificate(path: Path, cap: int) -> bytes | None:
    """The certificate's bytes (at most cap + 1), None when there is none; `UntrustedFileError`
    when the candidate put a link, FIFO, device or folder there (`read_untrusted`)."""
    return read_untrusted(path, cap)


_parsed_cache: dict[tuple[str, str, int, int], Any] = {}


def _parsed_instance(problem, path: Path):
    """Parsed instances are cached per process (an actor runs many candidates on one task)."""
    st = path.stat()
    key = (problem.name, str(path), st.st_mtime_ns, st.st_size)
    parsed = _parsed_cache.get(key)
    if parsed is None:
        if len(_parsed_cache) > 64:
            _parsed_cache.clear()
        parsed = problem.parse_instance(path)
        _parsed_cache[key] = parsed
    return parsed


def outcome_status(outcome: ProcessOutcome, candidate: Candidate) -> tuple[str | None, str]:
    """(status, message) decided by the process outcome alone, or (None, "") when the
    certificate decides."""
    term = outcome.termination
    if outcome.sandbox_error:
        return Status.INFRASTRUCTURE_ERROR.value, outcome.sandbox_error
    if term in ("walltime", "cputime"):
        return Status.TIMEOUT.value, outcome.message or f"{term} limit"
    if term == "memory":
        return Status.MEMOUT.value, outcome.message or "memory limit"
    if term == "disk":
        return Status.MEMOUT.value, f"disk limit exceeded: {outcome.message}"
    if term == "output":
        return Status.CRASH.value, f"output limit exceeded: {outcome.message}"
    if term == "nproc":
        return Status.CRASH.value, f"process limit exceeded: {outcome.message}"
    if term == "signal":
        tail = _short(outcome.stderr_tail, 200)
        return Status.CRASH.value, f"{outcome.message}" + (f"; stderr: {tail}" if tail else "")
    if outcome.exit_code not in candidate.exit_codes_ok:
        tail = _short(outcome.stderr_tail, 300)
        extra = f" ({outcome.message})" if outcome.message else ""
        return Status.CRASH.value, f"exit code {outcome.exit_code}{extra}" + (f"; stderr: {tail}" if tail else "")
    return None, ""


def run_instance(
    task,
    instance,
    candidate: Candidate,
    *,
    sandbox: Any,
    limits: Limits,
    seed: int,
    scratch_dir: str | os.PathLike,
    attempt: str | None = None,
    key: str | None = None,
    candidate_hash: str | None = None,
    sandbox_image: str | None = None,
    instance_sha256: str | None = None,
    hidden_paths: Sequence[str] = (),
) -> InstanceRecord:
    """Run `candidate` on `instance` (a TaskInstance or its name) of `task`; never raises for
    solver failures. An unexpected harness failure becomes an `infrastructure_error` record.
    The record is complete: its identity (`key`, `candidate_hash`, `sandbox_image`, `task`,
    `attempt`) is filled in from the arguments, nothing is set on it afterwards.

    Inputs are protected under every sandbox: the instance is checked after the run against
    `instance_sha256` (the record key's hash; by default its hash before the run) and restored
    from the harness's copy when the candidate changed it (the record is then `invalid`,
    termination `input`). Under ``local`` the candidate gets a private read-only copy of the
    instance. `hidden_paths` are hidden by the sandbox (see `orchestrate.hidden_paths`)."""
    name = getattr(instance, "name", str(instance))
    record = InstanceRecord(
        instance=name,
        status=Status.INFRASTRUCTURE_ERROR.value,
        task=getattr(task, "id", None),
        attempt=attempt,
        key=key,
        candidate_hash=candidate_hash,
        sandbox_image=sandbox_image,
        harness_version=HARNESS_VERSION,
        sandbox=getattr(sandbox, "name", sandbox if isinstance(sandbox, str) else None),
    )
    try:
        if isinstance(instance, str):
            instance = task.instance(instance)
        _run(record, task, instance, candidate, sandbox, limits, seed, Path(scratch_dir), instance_sha256, hidden_paths)
    except Exception as exc:  # the harness failed, not the solver
        record.status = Status.INFRASTRUCTURE_ERROR.value
        record.message = _short(f"harness error: {type(exc).__name__}: {exc}")
    return record


def _private_copy(pristine: bytes, scratch: Path, name: str) -> Path:
    """A read-only copy of the instance for a candidate under ``local`` (nothing can be mounted)."""
    folder = scratch / "input"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_bytes(pristine)
    path.chmod(0o444)
    return path


def _restore_if_changed(path: Path, before: os.stat_result, pristine: bytes, expected: str) -> str | None:
    """None when `path` still holds the instance; else restore it atomically from `pristine`
    and say what happened (for the record)."""
    try:
        now = os.lstat(path)  # a link, FIFO or device put in its place is never followed or opened
        same = (now.st_ino, now.st_size, now.st_mtime_ns, now.st_ctime_ns) == (
            before.st_ino, before.st_size, before.st_mtime_ns, before.st_ctime_ns,
        )  # fmt: skip
        data = None if same else read_untrusted(path, len(pristine), one_link=False)
        if same or (data is not None and hashlib.sha256(data).hexdigest() == expected):
            return None
        what = "changed" if data is not None else "removed"
    except UntrustedFileError:
        what = "replaced (by something that is not a regular file)"
    except OSError:
        what = "removed or made unreadable"
    tmp = path.with_name(f".{path.name}.tcsexam-restore-{os.getpid()}")
    tmp.write_bytes(pristine)
    os.replace(tmp, path)
    return f"the candidate {what} its input instance file {path} during the run; restored from the harness's copy"


def _run(record, task, instance, candidate, sandbox, limits, seed, scratch: Path, instance_sha256=None,
         hidden_paths=()) -> None:  # fmt: skip
    scratch = scratch.resolve()
    shared = not _box(sandbox).isolates_files  # no namespace: the candidate's uid must reach every path itself
    ids = candidate_ids()
    run_root = None  # as root under local: a folder the candidate's uid can reach, for this run only
    if ids is not None and shared and not can_read(scratch.parent, ids, ancestors=True):
        run_root = Path(tempfile.mkdtemp(prefix="tcsexam-run-", dir="/tmp"))
    home = run_root or scratch
    work = home / "work"
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    if ids is not None:  # the candidate's uid may pass through (not list) the scratch folder
        os.chmod(home, 0o711)
    if ids is not None and not can_read(candidate.dir, ids, ancestors=shared):
        candidate = dataclasses.replace(
            candidate, dir=readable_copy(candidate.dir, home / "candidate" / candidate.dir.name)
        )
    try:
        _run_in(record, task, instance, candidate, sandbox, limits, seed, scratch, home, work, instance_sha256,
                hidden_paths, shared, ids)  # fmt: skip
    finally:
        if run_root is not None:
            shutil.rmtree(run_root, ignore_errors=True)


def _run_in(record, task, instance, candidate, sandbox, limits, seed, scratch, home, work, instance_sha256,
            hidden_paths, shared, ids) -> None:  # fmt: skip
    solution = work / SOLUTION_NAME
    instance_path = Path(instance.path).resolve()
    if not instance_path.is_file():
        raise FileNotFoundError(f"instance file {instance_path} not found")
    before = instance_path.stat()
    pristine = instance_path.read_bytes()
    expected = hashlib.sha256(pristine).hexdigest()
    if instance_sha256 is not None and expected != instance_sha256:
        raise RuntimeError(f"instance file {instance_path} no longer matches the hash in the record key")
    private = shared or not can_read(instance_path, ids, ancestors=False)
    given = _private_copy(pristine, home, instance_path.name) if private else instance_path
    try:
        with anytime.watching(task, work, solution, limits) as watch:
            _execute(record, task, instance, candidate, sandbox, limits, seed, scratch, work, solution, instance_path,
                     given, hidden_paths)  # fmt: skip
            anytime.attach(watch, record, lambda data: _trace_check(task, instance, instance_path, data))
    finally:
        changed = _restore_if_changed(instance_path, before, pristine, expected)
    if changed:
        record.status = Status.INVALID.value
        record.termination = Termination.INPUT.value
        record.message = _short(changed)
        for name in ("A", "solved", "claimed", "reward"):
            setattr(record, name, None)
        record.trace = [] if record.trace is not None else None  # checked against a changed instance


def _execute(record, task, instance, candidate, sandbox, limits, seed, scratch, work, solution, instance_path, given,
             hidden_paths) -> None:  # fmt: skip
    values = {
        "instance": str(given),
        "solution": str(solution),
        "time_limit": _fmt_seconds(limits.wall_s),
        "seed": str(seed),
        "threads": str(candidate.threads),
        "workdir": str(work),
        "trace_dir": str(work / anytime.TRACE_DIR_NAME),
    }
    argv = format_command(candidate.command, values)
    env = candidate_env(candidate, time_limit=limits.wall_s, seed=seed, workdir=str(work),
                        python_dir=_python_dir(sandbox))  # fmt: skip
    try:
        outcome = run_limited(
            argv,
            cwd=candidate.dir,
            limits=limits,
            sandbox=sandbox,
            env=env,
            stdout_path=scratch / "stdout.log",
            stderr_path=scratch / "stderr.log",
            readonly_paths=(candidate.dir, given),
            writable_paths=(work,),
            output_paths=(solution,),
            hidden_paths=hidden_paths,
        )
    except LaunchError as exc:
        if exc.candidate_fault:
            record.status = Status.INVALID.value
            record.message = _short(f"the command could not be started: {exc}")
            record.termination = Termination.LAUNCH.value
            return
        raise
    if work.parent != scratch:  # relocated for the candidate's uid (local, root): back where callers expect it
        shutil.rmtree(scratch / "work", ignore_errors=True)
        work, solution = Path(shutil.move(str(work), str(scratch / "work"))), scratch / "work" / SOLUTION_NAME
    record.wall_s = outcome.wall_s
    record.cpu_s = outcome.cpu_s
    record.peak_mem_mb = outcome.peak_mem_mb
    record.exit_code = outcome.exit_code
    record.signal = outcome.signal
    record.termination = outcome.termination
    record.sandbox = outcome.sandbox or record.sandbox
    record.limiter = outcome.limiter
    status, message = outcome_status(outcome, candidate)
    if status == Status.CRASH.value and outcome.termination == "exit" and _box(sandbox).not_started(outcome):
        status, message = Status.INVALID.value, f"the command could not be started: {_short(outcome.stderr_tail, 300)}"
    if status is not None:
        record.status, record.message = status, _short(message)
        return
    try:
        cert = _read_certificate(solution, limits.output_bytes)
    except UntrustedFileError as exc:
        record.status = Status.INVALID.value
        record.message = f"the certificate {SOLUTION_NAME} is not a file the program wrote: {exc}"
        return
    if cert is None:
        record.status = Status.INVALID.value
        record.message = "no certificate written"
        return
    problem = task.problem_impl
    parsed = _parsed_instance(problem, instance_path)
    check = problem.check_certificate(parsed, cert, instance.meta)
    if check.status not in (Status.OK.value, Status.INVALID.value, Status.CERTIFICATE_FAILED.value):
        raise RuntimeError(f"checker returned status {check.status!r}")
    record.status = check.status
    record.claimed = check.claimed
    record.reward = check.reward
    record.message = _short(check.message)
    if check.status == Status.OK.value:
        if getattr(task, "kind", "objective") == "solve":
            record.solved = bool(check.solved)
            record.A = check.value
        else:
            record.A = check.value
            record.solved = check.solved


def _trace_check(task, instance, instance_path: Path, data: bytes) -> tuple[str, float | None]:
    """(status, value) of one anytime certificate, judged like a final one."""
    problem = task.problem_impl
    try:
        check = problem.check_certificate(_parsed_instance(problem, instance_path), data, instance.meta)
    except Exception:  # a checker failure is the harness's, as for the final certificate
        return Status.INFRASTRUCTURE_ERROR.value, None
    return check.status, (check.value if check.status == Status.OK.value else None)
