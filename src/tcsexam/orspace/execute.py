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

Outputs: `<out>/records/<workspace_id>.json` (written as each finishes: the resume point; reused
when its key, the sha256 of the workspace files, the limits, the interpreter and the harness
version, matches) and `<out>/predictions.jsonl` (`workspace_id, status, objective, failure_mode`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tcsexam import HARNESS_VERSION
from tcsexam.errors import InputError
from tcsexam.fileio import atomic_write_json, atomic_write_text, read_json, read_yaml
from tcsexam.orspace.objectives import status_failure_mode
from tcsexam.orspace.release import OBJECTIVE_MODES, discover_workspaces, parse_workspace_id
from tcsexam.orspace.result import RESULT_ENV, derive
from tcsexam.runner.store import IGNORED_DIRS, IGNORED_SUFFIXES, hash_candidate

DEFAULT_TIME_LIMIT_S = 180.0
ENTRY_POINTS = ("main.py", "solve.py", "model.py", "optimization_model.py", "current_heuristic.py")
RECORD_SCHEMA_VERSION = 1


@dataclass
class ExecuteSettings:
    time_limit_s: float = DEFAULT_TIME_LIMIT_S
    mem_mb: int | None = 4096
    sandbox: str = "auto"
    limiter: str = "auto"
    python: str = sys.executable
    workers: int = 1


def task_root(workspace: Path, mode: str) -> Path:
    return workspace if mode == "build" else workspace / "revised"


def find_entry(workspace: Path, mode: str) -> tuple[list[str] | None, str]:
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


def workspace_key(workspace: Path, settings: ExecuteSettings, limits: dict[str, Any]) -> str:
    """The record's reuse key: the workspace's files (hashed like a Solver candidate's), the
    limits, the interpreter, the sandbox and the harness version."""
    digest = hashlib.sha256(hash_candidate(workspace).encode())
    digest.update(
        json.dumps(
            {"limits": limits, "python": settings.python, "sandbox": settings.sandbox, "harness": HARNESS_VERSION},
            sort_keys=True,
        ).encode()
    )
    return digest.hexdigest()


def _prediction(wid: str, status: str | None, objective: float | None, failure: str | None) -> dict[str, Any]:
    return {"workspace_id": wid, "status": status, "objective": objective, "failure_mode": failure}


def run_workspace(wid: str, workspace: Path, settings: ExecuteSettings, sandbox: Any) -> dict[str, Any]:
    """Execute one submission; returns its execution record (never raises for program faults)."""
    from tcsexam.runner.limiter import LaunchError, Limits

    mode = parse_workspace_id(wid)[1]
    limits = Limits(wall_s=float(settings.time_limit_s), mem_mb=settings.mem_mb, limiter=settings.limiter)
    record: dict[str, Any] = {
        "schema_version": RECORD_SCHEMA_VERSION,
        "workspace_id": wid,
        "mode": mode,
        "workspace": str(workspace),
        "time_limit_s": settings.time_limit_s,
        "limits": limits.as_dict(),
        "sandbox": settings.sandbox,
        "harness_version": HARNESS_VERSION,
        "key": workspace_key(workspace, settings, limits.as_dict()),
    }
    template, entry = find_entry(workspace, mode)
    record["entry_point"] = entry
    if template is None:
        record.update(
            status="Missing",
            objective=None,
            failure_mode="missing_output",
            exit_code=None,
            signal=None,
            termination=None,
            wall_s=0.0,
            cpu_s=None,
            peak_mem_mb=None,
            stdout_tail="",
            stderr_tail="",
            status_source="none",
            message=f"no submission: {entry}",
        )
        return record
    scratch = Path(tempfile.mkdtemp(prefix=f"orspace-{wid}-"))
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
            "python": settings.python,
            "src": str(src),
            "root": str(root),
            "result_file": str(result_file),
            "time_limit": f"{settings.time_limit_s:g}",
        }
        try:
            argv = [part.format(**values) for part in template]
        except (KeyError, IndexError, ValueError) as exc:
            raise InputError(f"{workspace}: {entry}: bad placeholder in command: {exc}") from None
        env = {
            "PATH": os.pathsep.join([str(Path(settings.python).parent), "/usr/local/bin", "/usr/bin", "/bin"]),
            "HOME": str(scratch),
            "TMPDIR": str(scratch),
            "LANG": "C.UTF-8",
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONUNBUFFERED": "1",
            "OMP_NUM_THREADS": "1",
            RESULT_ENV: str(result_file),
            "TCSEXAM_TIME_LIMIT": f"{settings.time_limit_s:g}",
        }
        # the workspace is read-only too (bwrap hides /tmp, docker mounts only what is named)
        readonly = sorted({sys.prefix, sys.base_prefix, str(Path(settings.python).resolve().parents[1]), str(root)})
        try:
            outcome = sandbox.run(
                argv,
                cwd=str(src if src.is_dir() else root),
                limits=limits,
                env=env,
                stdout_path=scratch / "stdout.log",
                stderr_path=scratch / "stderr.log",
                readonly_paths=readonly,
                writable_paths=[str(scratch)],
                output_paths=[str(result_file)],
            )
        except LaunchError as exc:
            if not exc.candidate_fault:
                record.update(
                    failure_mode="infrastructure_error",
                    status=None,
                    objective=None,
                    message=f"harness could not start the program: {exc}",
                )
                return record
            record.update(
                status="Error",
                objective=None,
                failure_mode="execution_error",
                exit_code=None,
                signal=None,
                termination=None,
                wall_s=0.0,
                cpu_s=None,
                peak_mem_mb=None,
                stdout_tail="",
                stderr_tail="",
                status_source="none",
                message=f"cannot start: {exc}",
            )
            return record
        if outcome.sandbox_error:
            record.update(
                failure_mode="infrastructure_error",
                status=None,
                objective=None,
                message=f"sandbox failed: {outcome.sandbox_error}",
            )
            return record
        stdout = _read(scratch / "stdout.log")
        record.update(
            exit_code=outcome.exit_code,
            signal=outcome.signal,
            termination=outcome.termination,
            wall_s=outcome.wall_s,
            cpu_s=outcome.cpu_s,
            peak_mem_mb=outcome.peak_mem_mb,
            stdout_tail=outcome.stdout_tail,
            stderr_tail=outcome.stderr_tail,
            limiter=outcome.limiter,
        )
        result_text = _read(result_file) if result_file.exists() else None
        exit_ok = outcome.termination == "exit" and outcome.exit_code == 0
        derived = derive(result_text, stdout, exit_ok)
        record.update(status_source=derived["status_source"], message=derived["note"])
        if outcome.termination in ("walltime", "cputime"):
            record.update(
                status="Timeout",
                objective=None,
                failure_mode="timeout",
                message=f"{outcome.termination} limit exceeded ({settings.time_limit_s:g} s wall); any answer after the limit is ignored",
            )
        elif not exit_ok:
            what = {
                "memory": "memory limit exceeded",
                "output": "output limit exceeded",
                "signal": f"killed by signal {outcome.signal}",
                "nproc": "process limit exceeded",
            }
            record.update(
                status="Error",
                objective=None,
                failure_mode="execution_error",
                message=what.get(outcome.termination, f"exit code {outcome.exit_code}"),
            )
        elif derived["status"] is None:
            record.update(
                status="Missing",
                objective=derived["objective"],
                failure_mode="missing_output",
                message=derived["note"] or "no result file, no OBJECTIVE_VALUE/status line",
            )
        else:
            status = derived["status"]
            failure = None
            if status.lower() != "optimal":
                failure = status_failure_mode(status)
            elif derived["objective"] is None:
                failure = "missing_output"
            record.update(status=status, objective=derived["objective"], failure_mode=failure)
        return record
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _read(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8", "replace")
    except OSError:
        return ""


def execute(
    workspaces_root: Path,
    out_dir: Path,
    settings: ExecuteSettings,
    *,
    modes: tuple[str, ...] = OBJECTIVE_MODES,
    workspace_ids: list[str] | None = None,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Run every selected submission; returns a summary. Writes records and predictions.jsonl."""
    from tcsexam.runner.limiter import Limits
    from tcsexam.runner.sandboxes import choose_sandbox

    found = discover_workspaces(workspaces_root, modes)
    if workspace_ids:
        unknown = [w for w in workspace_ids if w not in found]
        if unknown:
            raise InputError(f"{workspaces_root}: no workspace {unknown[0]}")
        found = {w: p for w, p in found.items() if w in set(workspace_ids)}
    if not found:
        raise InputError(f"{workspaces_root}: no {'/'.join(modes)} workspaces found")
    if settings.time_limit_s <= 0:
        raise InputError(f"time limit must be positive, not {settings.time_limit_s}")
    sandbox, why = choose_sandbox(settings.sandbox)
    if progress is not None:
        progress(why)
    settings = dataclasses.replace(settings, sandbox=sandbox.name)  # `auto` resolved: keys name the real one
    records_dir = out_dir / "records"
    limits = Limits(wall_s=float(settings.time_limit_s), mem_mb=settings.mem_mb, limiter=settings.limiter).as_dict()

    records: dict[str, dict[str, Any]] = {}
    todo = []
    for wid, path in found.items():
        existing = records_dir / f"{wid}.json"
        if existing.exists():
            try:
                old = read_json(existing, "execution record")
            except InputError:
                old = None
            if (
                isinstance(old, dict)
                and old.get("failure_mode") != "infrastructure_error"
                and old.get("key") == workspace_key(path, settings, limits)
            ):
                records[wid] = old
                continue
        todo.append(wid)

    lock = threading.Lock()
    started = time.monotonic()
    done = [0, 0]

    def one(wid: str) -> dict[str, Any]:
        try:
            record = run_workspace(wid, found[wid], settings, sandbox)
        except InputError:
            raise
        except Exception as exc:  # the harness failed, not the program
            record = {
                "schema_version": RECORD_SCHEMA_VERSION,
                "workspace_id": wid,
                "failure_mode": "infrastructure_error",
                "status": None,
                "objective": None,
                "message": f"harness error: {type(exc).__name__}: {exc}",
            }
        atomic_write_json(records_dir / f"{wid}.json", record)
        with lock:
            done[0] += 1
            done[1] += record.get("failure_mode") is not None
            if progress:
                elapsed = time.monotonic() - started
                eta = elapsed / done[0] * (len(todo) - done[0])
                progress(
                    f"[{done[0]}/{len(todo)}] {wid}: {record.get('status')} "
                    f"({record.get('failure_mode') or 'ok'}); failures {done[1]}; ETA {eta:.0f} s"
                )
        return record

    with ThreadPoolExecutor(max_workers=max(1, settings.workers)) as pool:
        futures = [pool.submit(one, wid) for wid in todo]
        for future in as_completed(futures):
            record = future.result()
            records[record["workspace_id"]] = record

    infra = sorted(w for w, r in records.items() if r.get("failure_mode") == "infrastructure_error")
    if infra:
        raise InputError(
            f"{len(infra)} workspace(s) hit a harness failure, first {infra[0]}: "
            f"{records[infra[0]].get('message')}; rerun to retry them (records in {records_dir})"
        )
    lines = [
        json.dumps(_prediction(w, r.get("status"), r.get("objective"), r.get("failure_mode")))
        for w, r in sorted(records.items())
    ]
    atomic_write_text(out_dir / "predictions.jsonl", "\n".join(lines) + "\n")
    failures: dict[str, int] = {}
    for r in records.values():
        if r.get("failure_mode"):
            failures[r["failure_mode"]] = failures.get(r["failure_mode"], 0) + 1
    return {
        "workspaces": len(records),
        "executed": len(todo),
        "reused": len(records) - len(todo),
        "failure_modes": failures,
    }
