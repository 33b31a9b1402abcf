"""A candidate: its `solver.yaml` loaded and checked, the environment its programs run with, and
its build step (run once per attempt).

Candidate (`solver.yaml`)::

    command: ["python3", "solve.py", "{instance}", "{solution}"]  # required, non-empty strings
    build: ["make"]            # optional, run once per attempt in a copy of the folder
    threads: 1                 # optional, CPUs reserved per run (int >= 1)
    env: {OMP_NUM_THREADS: "1"}  # optional extra environment (string values)
    exit_codes_ok: [0, 10, 20]  # optional, exit codes that are not crashes (default [0])
    certificate: stdout        # optional, where the certificate is: file ({solution}, the default) or
                               # stdout (SAT/MaxSAT competition output printed as such solvers do)
    tasks:                     # optional, a task's own command when one folder serves several tasks
      tsp-random: {command: ["python3", "solve.py", "{instance}", "{solution}", "0.6", "{seed}"]}

Placeholders: {instance} {solution} {proof} {time_limit} {seed} {threads} {workdir} {trace_dir} ({{
and }} for braces; {seed} is in 1..2^31-1, default 1 (`SEED_MIN`, `SEED_MAX`, `DEFAULT_SEED`); {trace_dir} is `{workdir}/trace`, watched on anytime tasks: `tcsexam.runner.solver.anytime`).
The command runs with the candidate folder as working directory; `{workdir}` is the run's private
writable scratch directory (also TMPDIR and HOME), `{solution}` a file in it and `{proof}` another
(`{workdir}/proof`: where a SAT candidate claiming UNSAT writes its DRAT proof, `tcsexam.runner.solver.drat`).
The environment is minimal (PATH with the harness's Python first, LANG/LC_*, TZ, USER) plus
TCSEXAM_TIME_LIMIT, TCSEXAM_PROOF ({proof}), TCSEXAM_SEED, TCSEXAM_THREADS, OMP_NUM_THREADS=threads
and the candidate's `env`, whose loader,
glibc and shell start-up variables (`ENV_DENIED`) and relative or in-folder PATH entries are
refused when the candidate is loaded. A root harness runs the candidate as an unprivileged uid
(`sandboxes.runas`): its work folder is its own, its instance and folder readable copies where
the originals are out of its reach.
"""

from __future__ import annotations

import difflib
import fnmatch
import os
import shutil
import string
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path

from tcsexam.containment import Limiter
from tcsexam.errors import InputError, MisspeltKeyError
from tcsexam.fileio import Json, read_yaml, special_files
from tcsexam.limits import DEFAULT_SEED
from tcsexam.records import Termination
from tcsexam.runner.limiter import LaunchError, Limits, RunPaths, RunSpec
from tcsexam.runner.sandboxes.base import Sandbox
from tcsexam.runner.solver import drat
from tcsexam.schemas import check, load_schema

PLACEHOLDERS = frozenset({"instance", "solution", "proof", "time_limit", "seed", "threads", "workdir", "trace_dir"})
ENV_PASS = ("LANG", "LANGUAGE", "TZ", "USER", "LOGNAME", "TERM")
#: `env` keys a solver.yaml may not set: the dynamic loader's and glibc's (the variables glibc
#: itself ignores for setuid programs), the shells' start-up files, and what the harness sets
ENV_DENIED = (
    "LD_*",
    "DYLD_*",
    "GCONV_PATH",
    "GETCONF_DIR",
    "GLIBC_TUNABLES",
    "HOSTALIASES",
    "LOCALDOMAIN",
    "LOCPATH",
    "MALLOC_*",
    "NIS_PATH",
    "NLSPATH",
    "RESOLV_HOST_CONF",
    "RES_OPTIONS",
    "TZDIR",
    "BASH_ENV",
    "ENV",
    "TMPDIR",
    "HOME",
    "TCSEXAM_*",
)


class CertificateSource(StrEnum):
    """Where a run's certificate is read (`certificate:` in solver.yaml)."""

    FILE = "file"  #: the file `{solution}` (the default)
    STDOUT = "stdout"  #: the program's standard output (SAT and MaxSAT competition solvers print it)


@dataclass(frozen=True)
class Candidate:
    dir: Path
    command: tuple[str, ...]
    build: tuple[str, ...] | None = None
    threads: int = 1
    env: dict[str, str] = field(default_factory=dict, hash=False)
    exit_codes_ok: frozenset[int] = frozenset({0})
    source: Path | None = None
    certificate: CertificateSource = CertificateSource.FILE


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
        _no_nul(arg, f"{path}: {key!r}")
        _placeholders(arg, f"{path}: {key!r}")
    return tuple(value)


def _no_nul(text: str, where: str) -> None:
    """A NUL byte cannot be passed to a program (argv and environment are C strings): refused at
    load, with one line, instead of failing every run's start as the harness's error."""
    if "\0" in text:
        raise InputError(f"{where}: {text!r} contains a NUL byte (not allowed in a command or the environment)")


def load_candidate(directory: str | os.PathLike, task: str | None = None) -> Candidate:
    """Read `<directory>/solver.yaml` and validate it (schema `solver`, then its placeholders);
    InputError naming the file and key. A folder that serves several tasks may give one of them
    its own command (`tasks: {TASK: {command: [...]}}`); `task` selects it."""
    directory = Path(directory).resolve()
    path = directory / "solver.yaml"
    if not directory.is_dir():
        raise InputError(f"{directory}: candidate folder not found")
    data = read_yaml(path, "candidate solver.yaml")
    _check_keys(data, path)
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
        certificate=CertificateSource(data.get("certificate", CertificateSource.FILE)),
    )


def _check_keys(data: Json, path: Path) -> None:
    """MisspeltKeyError (exit 2, one line with the nearest known key) for a key `solver.yaml`
    does not know, at the top or in a `tasks.<id>` entry: a typo such as `comand` must not pass
    for a candidate that fails every instance."""
    schema = load_schema("solver")
    top = sorted(schema["properties"])
    places: list[tuple[str, Json, list[str]]] = [("", data, top)]
    if isinstance(data, dict) and isinstance(data.get("tasks"), dict):
        inner = sorted(schema["properties"]["tasks"]["additionalProperties"]["properties"])
        places += [(f"tasks.{name}.", entry, inner) for name, entry in data["tasks"].items()]
    for prefix, mapping, known in places:
        if not isinstance(mapping, dict):
            continue
        for key in mapping:
            if key in known:
                continue
            close = difflib.get_close_matches(str(key), known, n=1, cutoff=0.6)
            hint = f"; did you mean {prefix}{close[0]!r}?" if close else ""
            raise MisspeltKeyError(
                f"{path}: unknown key {prefix}{key!r}{hint} (known: {', '.join(known)}; docs/runner.md, Candidates)"
            )


def _check_env(env: dict[str, str], path: Path, directory: Path) -> None:
    """InputError (one line naming the file and key) for an `env` key on the deny list
    (`ENV_DENIED`) or a PATH entry that is relative or inside the candidate folder."""
    for key, value in env.items():
        _no_nul(f"{key}={value}", f"{path}: 'env'")
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


def candidate_env(
    candidate: Candidate, *, wall_s: float, seed: int, workdir: str, python_dir: str | None = None
) -> dict[str, str]:
    """The minimal environment a candidate runs with (see the module doc): HOME and TMPDIR are
    the run's private work folder; `python_dir` (default: the harness's interpreter folder) comes
    first on PATH, then the absolute entries of this process's PATH."""
    here = python_dir or os.path.dirname(sys.executable)
    path = os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin")
    kept = [p for p in path.split(os.pathsep) if os.path.isabs(p) and p != here]
    env = program_env(workdir, path=[here, *kept], inherit=True)
    env["OMP_NUM_THREADS"] = str(candidate.threads)
    env.update(candidate.env)
    env["TCSEXAM_TIME_LIMIT"] = format_seconds(wall_s)
    env["TCSEXAM_PROOF"] = os.path.join(workdir, drat.PROOF_NAME)
    env["TCSEXAM_SEED"] = str(seed)
    env["TCSEXAM_THREADS"] = str(candidate.threads)
    return env


def program_env(workdir: str, *, path: Sequence[str], inherit: bool, **fixed: str) -> dict[str, str]:
    """The environment every untrusted program starts from (Solver candidates, OR-Space
    submissions): nothing of this process's but, with `inherit`, LANG, TZ, USER and the like
    (`ENV_PASS`) and LC_*; PATH the folders `path`; HOME and TMPDIR the run's private `workdir`;
    then `fixed`."""
    env = {k: os.environ[k] for k in ENV_PASS if k in os.environ} if inherit else {}
    if inherit:
        env.update({k: v for k, v in os.environ.items() if k.startswith("LC_")})
    env["PATH"] = os.pathsep.join(path)
    env["HOME"] = workdir
    env["TMPDIR"] = workdir
    env.update(fixed)
    return env


def format_seconds(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(float(x))


def format_command(argv, values: Mapping[str, object]) -> list[str]:
    return [arg.format_map(values) for arg in argv]


def build_candidate(
    candidate: Candidate,
    *,
    sandbox: Sandbox,
    limits: Limits,
    build_dir: str | os.PathLike,
    log_path: str | os.PathLike,
    limiter: Limiter = Limiter.AUTO,
) -> tuple[Candidate | None, str]:
    """Run the candidate's `build` once in a copy at `build_dir` (replaced) inside `sandbox` under
    `limits` (enforced by `limiter`), output to `log_path`. Returns (the built candidate rooted at
    build_dir, message) or (None, why it failed)."""
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
        "proof": "",
        "time_limit": format_seconds(limits.wall_s),
        "seed": str(DEFAULT_SEED),
        "threads": str(candidate.threads),
        "workdir": str(build_dir),
        "trace_dir": "",
    }
    argv = format_command(candidate.build, values)
    env = candidate_env(
        candidate, wall_s=limits.wall_s, seed=DEFAULT_SEED, workdir=str(build_dir), python_dir=sandbox.python_dir()
    )
    paths = RunPaths(stdout_path=log_path, stderr_path=log_path, writable_paths=(build_dir,))
    try:
        outcome = sandbox.run(RunSpec(argv, build_dir, limits, env, paths, limiter))
    except LaunchError as exc:
        with open(log_path, "a", encoding="utf-8") as fh:
            fh.write(f"\n[tcsexam] {exc}\n")
        return None, f"build command {' '.join(argv)!r} could not start: {exc}"
    what = f"build {' '.join(argv)!r}"
    if outcome.sandbox_error:
        return None, f"{what}: sandbox failed: {outcome.sandbox_error}"
    if outcome.termination != Termination.EXIT or outcome.exit_code != 0:
        reason = outcome.message or (
            f"exit code {outcome.exit_code}" if outcome.exit_code is not None else f"signal {outcome.signal}"
        )
        return None, f"{what} failed ({outcome.termination}: {reason}) after {outcome.wall_s:.1f} s"
    return replace(candidate, dir=build_dir, env=dict(candidate.env)), f"built in {outcome.wall_s:.1f} s"
