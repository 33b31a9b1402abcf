"""Sandboxes, one module each: local (limits only), bwrap, docker, apptainer; `auto` picks one.

`get_sandbox(name, **options)` returns a sandbox object; call `.check_available()` once at the
start of a run: it raises `InputError` with one clear line when the sandbox cannot run here.
`choose_sandbox(name)` does both, and resolves ``auto`` to the strongest sandbox that works here,
in the order bwrap, docker (engine reachable and the configured image present), apptainer, local.
`Sandbox.run(spec)` runs one program (a `RunSpec`) in the sandbox under limits
(`tcsexam.runner.limiter`); `run_limited(argv, ...)` builds the spec from keywords.
"""

from __future__ import annotations

import importlib
import os
import shutil
import sys
import tempfile
from collections.abc import Mapping, Sequence
from typing import Any

from tcsexam.containment import SANDBOX_NAMES, ChoiceOption, Limiter, SandboxName
from tcsexam.errors import InputError
from tcsexam.records import Termination
from tcsexam.runner.limiter import Limits, ProcessOutcome, RunPaths, RunSpec
from tcsexam.runner.sandboxes.base import Sandbox
from tcsexam.runner.sandboxes.runas import candidate_ids, give_to

#: sandbox name -> (module, class)
SANDBOXES: dict[str, tuple[str, str]] = {
    SandboxName.LOCAL: ("tcsexam.runner.sandboxes.local", "LocalSandbox"),
    SandboxName.BWRAP: ("tcsexam.runner.sandboxes.bwrap", "BwrapSandbox"),
    SandboxName.DOCKER: ("tcsexam.runner.sandboxes.docker", "DockerSandbox"),
    SandboxName.APPTAINER: ("tcsexam.runner.sandboxes.apptainer", "ApptainerSandbox"),
}
assert set(SANDBOXES) == set(SANDBOX_NAMES)
NAMES: tuple[SandboxName, ...] = SANDBOX_NAMES
#: what `auto` tries, strongest first (local always works)
AUTO_ORDER = (SandboxName.BWRAP, SandboxName.DOCKER, SandboxName.APPTAINER, SandboxName.LOCAL)
#: what `--sandbox` may choose, as plain strings (argparse, YAML)
CHOICES = tuple(str(x) for x in (SandboxName.AUTO, *NAMES))
#: the `--sandbox` option of every command that runs candidates (`tcsexam run`, `orspace execute`)
SANDBOX_OPTION: ChoiceOption = {
    "default": str(SandboxName.AUTO),
    "choices": CHOICES,
    "help": "auto (default): the strongest sandbox that works here, in the order bwrap, docker (engine reachable, "
    "image present), apptainer; `local` only with --allow-unsandboxed; checked once per job, the choice is logged",
}


def get_sandbox(name: str, **options: Any) -> Sandbox:
    """The sandbox called `name` (local|bwrap|docker|apptainer); InputError for another name
    (``auto`` is resolved by `choose_sandbox`)."""
    try:
        module_name, class_name = SANDBOXES[name]
    except KeyError:
        raise InputError(f"unknown sandbox {name!r}; choose one of {', '.join(NAMES)}") from None
    cls: type[Sandbox] = getattr(importlib.import_module(module_name), class_name)
    return cls(**options)


def unsandboxed_allowed(flag: bool = False) -> bool:
    """Candidates are declared trusted: `--allow-unsandboxed` (the workflow's
    `run.allow_unsandboxed: true` passes it) or TCSEXAM_ALLOW_UNSANDBOXED=1."""
    return flag or os.environ.get("TCSEXAM_ALLOW_UNSANDBOXED", "") in ("1", "true", "yes")


def described(box: Sandbox) -> str:
    """` [bundled bwrap 0.11.0: /path]`: what `box.describe()` says, for the log line."""
    info = box.describe()
    if not info:
        return ""
    words = " ".join(str(info[k]) for k in ("origin",) if info.get(k))
    words = f"{words} {box.name} {info.get('version') or '(version unknown)'}".strip()
    return f" [{words}: {info['executable']}]" if info.get("executable") else f" [{words}]"


def sandbox_options(name: str, docker_image: str | None) -> dict[str, str]:
    """What `get_sandbox(name, ...)` takes of a run's sandbox options: the docker sandbox its image
    (`RunOptions.docker_image`; None: its default), the others nothing."""
    return {"image": docker_image} if name == SandboxName.DOCKER and docker_image else {}


def choose_sandbox(
    name: str, *, allow_unsandboxed: bool = False, docker_image: str | None = None, **options: Any
) -> tuple[Sandbox, str]:
    """(the sandbox, one line saying why) for `name`, checked to work here: an explicit name that
    cannot run is an InputError; ``auto`` takes the first of `AUTO_ORDER` that works, but never
    `local` silently: without `unsandboxed_allowed` it stops with one line naming what is missing.
    `docker_image`: the docker sandbox's image, chosen or tried by `auto` (None: its default)."""
    if name != SandboxName.AUTO:
        box = get_sandbox(name, **options, **sandbox_options(name, docker_image))
        box.check_available()
        return box, f"sandbox {name}{described(box)}"
    skipped: list[str] = []
    for candidate in AUTO_ORDER:
        if candidate == SandboxName.LOCAL and not unsandboxed_allowed(allow_unsandboxed):
            missing = "; ".join(f"{n}: {s}" for n, s in zip(AUTO_ORDER, skipped, strict=False))
            raise InputError(
                f"sandbox auto: no sandbox for untrusted candidates works here ({missing}); fix one of them, or, "
                "only if the candidates are trusted, pass --allow-unsandboxed (workflow: run.allow_unsandboxed: true)"
            )
        box = get_sandbox(candidate, **sandbox_options(candidate, docker_image))
        try:
            box.check_available()
        except InputError as exc:
            skipped.append(str(exc).removeprefix(f"sandbox {candidate}: "))
            continue
        why = f" (not {', '.join(f'{n}: {s}' for n, s in zip(AUTO_ORDER, skipped, strict=False))})" if skipped else ""
        trusted = " (candidates declared trusted: NOT CONTAINED)" if candidate == SandboxName.LOCAL else ""
        return box, f"sandbox auto -> {candidate}{described(box)}{why}{trusted}"
    raise InputError("sandbox auto: no sandbox works here")  # unreachable: local always works


#: what `python3` must import inside every sandbox (docs/runner.md, Candidates)
PROMISED_MODULES = ("numpy", "pysat")
#: the Python probes that passed in this process, kept for the sandboxes it makes later (a fork
#: server's are its commands': `tcsexam.forkserver.warm`); a failed probe is run again
_PYTHON_OK: set[tuple[object, ...]] = set()


def probe_python(
    box: Sandbox, *, limiter: Limiter = Limiter.AUTO, modules: Sequence[str] = PROMISED_MODULES
) -> str | None:
    """Run `python3 -c "import numpy, ..."` inside `box` as a candidate would (its PATH, its
    uid, a scratch folder); None when it works, else one line saying what failed."""
    here = box.python_dir()
    box_id = (box.name, getattr(box, "exe", None), getattr(box, "image", None))  # bwrap's binary, docker's image
    known = (os.geteuid(), candidate_ids() is None, *box_id, str(limiter), tuple(modules), here)
    if known in _PYTHON_OK:
        return None
    path = os.pathsep.join([p for p in [here, "/usr/local/bin", "/usr/bin", "/bin"] if p])
    work = tempfile.mkdtemp(prefix="tcsexam-probe-", dir="/tmp")
    os.chmod(work, 0o755)
    give_to([work], candidate_ids())
    code = f"import {', '.join(modules)}"
    try:
        env = {"PATH": path, "HOME": work, "TMPDIR": work}
        outcome = box.run(
            RunSpec(["python3", "-c", code], work, Limits(wall_s=120), env, RunPaths(writable_paths=[work]), limiter)
        )
    except Exception as exc:  # LaunchError, a sandbox that failed
        return f"sandbox {box.name}: the Python probe could not start: {exc}"
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if outcome.sandbox_error is None and outcome.termination == Termination.EXIT and outcome.exit_code == 0:
        _PYTHON_OK.add(known)
        return None
    why = " ".join((outcome.sandbox_error or outcome.stderr_tail or outcome.message).split())[-300:]
    return (
        f"sandbox {box.name}: python3 inside cannot `{code}` (the candidates' documented interpreter; harness "
        f"{sys.executable}): {why or f'exit code {outcome.exit_code}'}"
    )


def run_limited(
    argv: Sequence[str],
    *,
    cwd: str | os.PathLike,
    limits: Limits,
    sandbox: Sandbox | None = None,
    env: Mapping[str, str] | None = None,
    limiter: Limiter = Limiter.AUTO,
    **paths: Any,
) -> ProcessOutcome:
    """Run `argv` inside `sandbox` (default: local) under `limits`, enforced by `limiter`: the
    `RunSpec` of these, `paths` being `RunPaths`' fields (stdout_path, stderr_path,
    readonly_paths, writable_paths, output_paths, hidden_paths) and `env` by default this
    process's own. Raises `LaunchError` when the program cannot be started; never leaves a
    process behind."""
    box = get_sandbox(SandboxName.LOCAL) if sandbox is None else sandbox
    spec = RunSpec(argv, cwd, limits, dict(os.environ if env is None else env), RunPaths(**paths), limiter)
    return box.run(spec)


__all__ = [
    "AUTO_ORDER",
    "CHOICES",
    "NAMES",
    "PROMISED_MODULES",
    "SANDBOXES",
    "Sandbox",
    "choose_sandbox",
    "get_sandbox",
    "probe_python",
    "run_limited",
    "sandbox_options",
    "unsandboxed_allowed",
]
