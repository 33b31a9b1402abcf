"""The provenance manifest of one evaluation: `<results>/<suite>/<protocol>/manifest.json`.

It says what produced the run, so that another run can be compared with it input by input
(`tcsexam compare`): software and machine, limiter and sandbox, the reference file, every Solver
task file with its limits and instance hashes, every candidate's hash with its status counts and
solver time, and the other tracks' verdict files. Keys are written in a fixed order (sections in
the order below, models / tasks / attempts / instances sorted), so two manifests of the same inputs
on the same machine are byte-identical.

Everything is read from the finished run directory (cohort.json, attempts.csv, the solver records)
and from the inputs it names: the task files, the reference file, the candidates (only when the
records do not carry the candidate hash themselves) and the verdict files. Where those inputs
live comes from options, else from the run's previous manifest.json, else the bundled defaults.
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import platform
import subprocess
from collections import Counter
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

from tcsexam import __version__
from tcsexam.attempts.construction import checker_outputs
from tcsexam.attempts.online import SIDECAR, records_source
from tcsexam.errors import InputError
from tcsexam.fileio import JsonObject, atomic_write_json, is_finite_number, read_json
from tcsexam.layout import ResultsLayout, attempt_files
from tcsexam.paths import project_root
from tcsexam.records.digest import hash_candidate, hash_file
from tcsexam.runner.observers.calibrate import collect as collect_calibration
from tcsexam.scoring.reference import resolve_reference_path
from tcsexam.scoring.vocabulary import ScoreStatus
from tcsexam.suites import VERDICT_TRACKS, Track, load_suite
from tcsexam.tasks import Task, load_task

SCHEMA_VERSION = 1
PACKAGES = ("numpy", "scipy", "ray", "snakemake", "python-sat")


def sha256_file(path: str | os.PathLike) -> str | None:
    """sha256 of a file's bytes, None when it does not exist (InputError when it cannot be read)."""
    return hash_file(path) if Path(path).exists() else None


# ---------------------------------------------------------------------------------------------
# software and machine


def software_versions() -> JsonObject:
    out: JsonObject = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def tcsexam_provenance() -> JsonObject:
    """The package version and, when it runs from a git checkout, the commit and whether tracked
    files differ from it."""
    out: JsonObject = {"version": __version__, "git_commit": None, "git_dirty": None}
    # the checkout the package runs from (an editable install), else the workflow's project root
    roots = [Path(__file__).resolve().parents[3], project_root()]
    root = next((r for r in roots if (r / ".git").exists() and (r / "src" / "tcsexam").is_dir()), None)
    if root is None:
        return out
    try:
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10)
        if head.returncode == 0:
            out["git_commit"] = head.stdout.strip()
            dirty = subprocess.run(
                ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                capture_output=True,
                text=True,
                timeout=30,
            )
            if dirty.returncode == 0:
                out["git_dirty"] = bool(dirty.stdout.strip())
    except (OSError, subprocess.TimeoutExpired):
        pass
    return out


def _os_name() -> str:
    try:
        for line in Path("/etc/os-release").read_text().splitlines():
            if line.startswith("PRETTY_NAME="):
                return line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    return platform.system()


def _cpu_model() -> str | None:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith(("model name", "hardware", "cpu model")):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


def _memory_mb() -> int | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) // 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def machine_info() -> JsonObject:
    return {
        "os": _os_name(),
        "kernel": platform.release(),
        "architecture": platform.machine(),
        "cpu_model": _cpu_model(),
        "cores": os.cpu_count(),
        "memory_mb": _memory_mb(),
    }


# ---------------------------------------------------------------------------------------------
# the run's inputs


@dataclass
class Sources:
    """Where the run's inputs live (relative paths are taken from the project root)."""

    reference: str | None = None  #: lite, full or a path (default: the suite's name)
    solvers_dir: str = "solvers"
    verdicts_dir: str = "config/verdicts"
    task_files: dict[str, str] = field(default_factory=dict)  #: task -> task file (default config/tasks/<task>.yaml)
    suite: str | None = None  #: the suite's id or file (default: the cohort's suite id, config/suites/<id>.yaml)


def _resolve(path: str) -> Path:
    p = Path(path)
    return p if p.is_absolute() else project_root() / p


def sources_from_manifest(run_dir: Path) -> Sources | None:
    """The input locations the run's existing manifest recorded (None without one)."""
    path = ResultsLayout(run_dir).manifest
    if not path.is_file():
        return None
    try:
        data = read_json(path, "manifest")
        src = data["sources"]
        return Sources(
            reference=src.get("reference"),
            solvers_dir=src.get("solvers_dir") or "solvers",
            verdicts_dir=src.get("verdicts_dir") or "config/verdicts",
            task_files=dict(src.get("task_files") or {}),
            suite=src.get("suite"),
        )
    except (InputError, KeyError, TypeError, AttributeError):
        return None


def _attempt_rows(run_dir: Path) -> list[dict[str, str]]:
    path = ResultsLayout(run_dir).attempts_csv
    if not path.is_file():
        return []
    with open(path, newline="", encoding="utf-8-sig") as fh:
        return list(csv.DictReader(fh))


def _records(path: Path) -> list[JsonObject]:
    data = read_json(path, "records file")
    if not isinstance(data, list):
        raise InputError(f"{path}: records file must be a JSON list")
    return [r for r in data if isinstance(r, dict)]


def _sum(records: list[JsonObject], key: str) -> float:
    return float(sum(r[key] for r in records if is_finite_number(r.get(key))))


def _image_ids(record: JsonObject) -> list[str]:
    """Container image ids a record names (issue 10 adds one; any key mentioning an image)."""
    out = []
    for source in (record, record.get("extra") or {}):
        if not isinstance(source, dict):
            continue
        for key, value in source.items():
            if "image" in key.lower() and isinstance(value, str) and value:
                out.append(value)
            elif key == "sandbox_info" and isinstance(value, dict):
                out += [v for k, v in value.items() if "image" in k.lower() and isinstance(v, str) and v]
    return out


def solver_result_source(attempt_dir: Path, records: list[JsonObject]) -> JsonObject:
    """Where one Solver result's records came from: `harness` (with the sha256 of the record keys
    in task order, and how many) or `online_input` (the judged file, its sha256 and the
    provenance.json recorded beside it at ingestion); `unknown` when the records say neither."""
    src = records_source(records, attempt_dir / "records.json")
    if src is None:
        return {"origin": "unknown"}
    if src["origin"] == "harness":
        keys = json.dumps(src["record_keys"], sort_keys=True, separators=(",", ":"))
        return {
            "origin": "harness",
            "protocol": "offline",
            "record_keys": len(src["record_keys"]),
            "record_keys_sha256": hashlib.sha256(keys.encode("utf-8")).hexdigest(),
        }
    out = {
        "origin": "online_input",
        "protocol": "online",
        "input": src.get("input"),
        "input_sha256": src["input_sha256"],
    }
    sidecar = attempt_dir / SIDECAR
    side = read_json(sidecar, "online input file") if sidecar.is_file() else {}
    if isinstance(side, dict) and side.get("input_sha256") == src["input_sha256"]:
        out["provenance_file"] = side.get("provenance_file")
        out["provenance_sha256"] = side.get("provenance_sha256")
        out["provenance"] = side.get("provenance")
    return out


def build_manifest(run_dir: str | os.PathLike, sources: Sources | None = None) -> JsonObject:
    """The manifest of a finished (or partly finished) run directory."""
    run_dir = Path(run_dir)
    cohort = _read_cohort(run_dir)
    sources = sources or sources_from_manifest(run_dir) or Sources()
    suite_id = str(cohort.get("suite"))
    suite = load_suite(sources.suite or suite_id)
    reference_spec = sources.reference or suite_id
    reference_path = resolve_reference_path(reference_spec)
    if not reference_path.is_absolute() and not reference_path.exists():
        reference_path = _resolve(str(reference_path))
    rows = _attempt_rows(run_dir)
    runs = _solver_runs(run_dir, rows)
    tasks, task_files = _task_entries(suite.tracks["solver"], sources, runs)
    models = {
        name: {"attempts_per_task": spec.get("attempts_per_task")} for name, spec in sorted(cohort["models"].items())
    }
    return {
        "schema_version": SCHEMA_VERSION,
        "run": {
            "suite": suite_id,
            "solver_protocol": cohort.get("solver_protocol"),
            "solver_reference_id": cohort.get("solver_reference_id"),
            "models": models,
        },
        "tcsexam": tcsexam_provenance(),
        "software": software_versions(),
        "machine": machine_info(),
        "execution": _execution(runs),
        "reference": {
            "id": cohort.get("solver_reference_id"),
            "file": str(reference_spec),
            "sha256": sha256_file(reference_path),
        },
        "tasks": tasks,
        "candidates": _candidate_entries(run_dir, runs, sources),
        "verdicts": _verdict_entries(rows, sources),
        "constructions": _construction_checker_outputs(run_dir),
        "proofs": _proof_verdicts(run_dir),
        "calibration": collect_calibration(run_dir),  # how fast the machine was (runner/observers/calibrate.py)
        "sources": {
            "reference": str(reference_spec),
            "solvers_dir": sources.solvers_dir,
            "verdicts_dir": sources.verdicts_dir,
            "task_files": task_files,
            **({"suite": sources.suite} if sources.suite else {}),
        },
    }


Runs = dict[tuple[str, str, str], list[JsonObject]]


def _solver_runs(run_dir: Path, rows: list[dict[str, str]]) -> Runs:
    """The records of every Solver result, <run>/solver/<model>/<task>/<attempt>/records.json, less
    those of attempts the attempt table calls `missing`: a records.json left by an earlier run
    whose candidate or judged input is gone is no result of this one."""
    missing = {
        (r.get("model"), r.get("item"), r.get("attempt"))
        for r in rows
        if r.get("track") == Track.SOLVER and r.get("score_status") == ScoreStatus.MISSING
    }
    files = ResultsLayout(run_dir).solver_files("records.json")
    return {(m, t, a): _records(path) for m, t, a, path in files if (m, t, a) not in missing}


def _read_cohort(run_dir: Path) -> JsonObject:
    """The run's cohort.json (a run directory without one is no finished evaluation)."""
    if not run_dir.is_dir():
        raise InputError(f"{run_dir}: run directory not found")
    cohort_path = run_dir / "cohort.json"
    if not cohort_path.is_file():
        raise InputError(f"{run_dir}: no cohort.json: not a finished evaluation (results/<suite>/<protocol>)")
    cohort = read_json(cohort_path, "cohort file")
    if not isinstance(cohort, dict) or not isinstance(cohort.get("models"), dict):
        raise InputError(f"{cohort_path}: not a cohort file")
    return cohort


def _execution(runs: Runs) -> dict[str, list[Any]]:
    """The limiters, sandboxes and image ids the Solver records name, and the programs that ran
    the sandboxes (`sandbox_runtimes`: each sandbox with its `extra.sandbox_info`, e.g. bwrap's
    path, version and origin, system or bundled)."""
    limiters, sandboxes, images = set(), set(), set()
    runtimes: set[tuple[tuple[str, str], ...]] = set()
    for recs in runs.values():
        for r in recs:
            if isinstance(r.get("limiter"), str):
                limiters.add(r["limiter"])
            if isinstance(r.get("sandbox"), str):
                sandboxes.add(r["sandbox"])
                info = (r.get("extra") or {}).get("sandbox_info") if isinstance(r.get("extra"), dict) else None
                if isinstance(info, dict) and info:
                    fields = {"sandbox": r["sandbox"], **{str(k): str(v) for k, v in info.items() if v is not None}}
                    runtimes.add(tuple(sorted(fields.items())))
            images.update(_image_ids(r))
    return {
        "limiters": sorted(limiters),
        "sandboxes": sorted(sandboxes),
        "image_ids": sorted(images),
        "sandbox_runtimes": [dict(t) for t in sorted(runtimes)],
    }


def _task_entries(solver_tasks, sources: Sources, runs: Runs) -> tuple[JsonObject, dict[str, str]]:
    """Solver tasks: file hash, limits, the instances the run used (every instance of any record;
    the whole task when no record exists yet); and the task file of each."""
    tasks: JsonObject = {}
    task_files: dict[str, str] = {}
    for task in solver_tasks:
        spec = sources.task_files.get(task) or f"config/tasks/{task}.yaml"
        task_files[task] = spec
        path = _resolve(spec)
        if not path.is_file():
            tasks[task] = {"file": spec, "sha256": None, "limits": None, "instances": {}}
            continue
        t = load_task(path)
        used = {r.get("instance") for (m, k, a), recs in runs.items() if k == task for r in recs}
        chosen = [inst for inst in t.instances if inst.name in used] if used else list(t.instances)
        known = {inst.name for inst in t.instances}
        instances = {inst.name: sha256_file(inst.path) for inst in chosen}
        for name in sorted(str(n) for n in used if n not in known and n is not None):
            instances[name] = None  # a record of an instance the task file does not define
        tasks[task] = {
            "file": spec,
            "sha256": sha256_file(path),
            "limits": _task_limits(t),
            "instances": dict(sorted(instances.items())),
        }
    return tasks, task_files


def _task_limits(task: Task) -> JsonObject:
    """A task's limits as its file says them; a SAT task's also its `unsat_proof` rule and the DRAT
    checker's limits (`proof_wall_s`, `proof_mem_mb`, `proof_mb`): runs judged under another rule
    are not comparable (`tcsexam compare`'s task_limits)."""
    limits = task.limits.task_dict()
    pl = task.proof_limits
    if task.unsat_proof is not None and pl is not None:  # (a SAT task has both)
        limits.update(
            unsat_proof=task.unsat_proof, proof_wall_s=pl.wall_s, proof_mem_mb=pl.mem_mb, proof_mb=pl.proof_mb
        )
    return limits


def _candidate_entries(run_dir: Path, runs: Runs, sources: Sources) -> JsonObject:
    """Candidates: the hash the records' keys were made from, record counts, statuses, solver time."""
    candidates: JsonObject = {}
    for (model, task, attempt), recs in sorted(runs.items()):
        origin = solver_result_source(ResultsLayout(run_dir).attempt_dir(model, task, attempt), recs)
        hashes = sorted({r["candidate_hash"] for r in recs if isinstance(r.get("candidate_hash"), str)})
        source: str | None = "records"
        if not hashes and origin["origin"] == "online_input":
            source = None  # judged records of the model's own session: no candidate ran here
        elif not hashes:
            folder = _resolve(sources.solvers_dir) / model / task / attempt
            hashes = [hash_candidate(folder)] if (folder / "solver.yaml").is_file() else []
            source = "candidate_dir" if hashes else None
        statuses = Counter(str(r.get("status")) for r in recs)
        entry = candidates.setdefault(model, {}).setdefault(task, {})[attempt] = {
            "candidate_hash": hashes[0] if len(hashes) == 1 else (hashes or None),
            "hash_source": source,
            "records": len(recs),
            "statuses": dict(sorted(statuses.items())),
            "solver_wall_s": round(_sum(recs, "wall_s"), 6),
            "solver_cpu_s": round(_sum(recs, "cpu_s"), 6),
            "source": origin,
        }
        scan = _scan_entry(ResultsLayout(run_dir).attempt_dir(model, task, attempt) / "scan.json")
        if scan is not None:
            entry["scan"] = scan
    return candidates


def _scan_entry(path: Path) -> JsonObject | None:
    """The candidate scan of one attempt (`tcsexam scan-candidate`, docs/twins.md): its summary and
    every finding with file and line; None without a scan.json."""
    if not path.is_file():
        return None
    try:
        report = read_json(path, "scan report")
    except InputError:
        return {"error": f"{path.name} could not be read"}
    if not isinstance(report, dict):
        return {"error": f"{path.name} is not a scan report"}
    return {"summary": report.get("summary", {}), "findings": report.get("findings", [])}


def _verdict_entries(rows: list[dict[str, str]], sources: Sources) -> JsonObject:
    """The other tracks' verdict files (sha256): every planned non-solver attempt of the attempt table."""
    verdicts: JsonObject = {}
    verdict_root = _resolve(sources.verdicts_dir)
    planned = sorted(
        {
            (r.get("model", ""), r.get("item", ""), r.get("attempt", ""))
            for r in rows
            if r.get("track") in VERDICT_TRACKS
        }
    )
    for model, item, attempt in planned:
        verdicts.setdefault(model, {}).setdefault(item, {})[attempt] = sha256_file(
            verdict_root / model / item / f"{attempt}.json"
        )
    return verdicts


#: what the manifest keeps of each proof verdict the pipeline wrote (tcsexam proof check)
PROOF_FIELDS = (
    "status",
    "complete",
    "resolution",
    "checker",
    "checker_version",
    "statement_sha256",
    "proof_sha256",
    "theorem",
    "axioms",
    "sandbox",
    "limiter",
    "wall_s",
    "reason",
)


def _proof_verdicts(run_dir: Path) -> JsonObject:
    """model -> item -> attempt -> the evidence of every proof the pipeline checked."""
    out: JsonObject = {}
    for model, item, attempt, path in attempt_files(ResultsLayout(run_dir).proof_dir, "verdict.json"):
        data = read_json(path, "proof verdict")
        entry = {k: data.get(k) for k in PROOF_FIELDS}
        entry["verdict_sha256"] = sha256_file(path)
        out.setdefault(model, {}).setdefault(item, {})[attempt] = entry
    return out


def _construction_checker_outputs(run_dir: Path) -> JsonObject:
    """The checker output of every construction judged by the pipeline (tcsexam.attempts.construction)."""
    return checker_outputs(run_dir)


def write_manifest(run_dir: str | os.PathLike, output: str | os.PathLike | None = None, sources=None) -> Path:
    data = build_manifest(run_dir, sources)
    out = Path(output) if output else ResultsLayout(Path(run_dir)).manifest
    try:
        atomic_write_json(out, data)
    except OSError as exc:
        raise InputError(f"{out}: cannot write the manifest: {exc.strerror or exc}") from None
    return out
