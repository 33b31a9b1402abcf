"""Soak: several Snakemake workflows at once on one machine give the records of a workflow alone.

Issue 32.3: "a soak runs three workflows at once on one machine and every record equals a run
alone (statuses; A for the deterministic demos)". Each workflow works in its own copy of the
workflow (Snakefile, rules, workflow, config, envs, the models' solvers; the instance files
linked) with its own results folder; they share the machine's /tmp, its sandboxes, its
/run/tcsexam and each starts its own Ray head, as evaluations started by different people would.

The config is the tiny test config (config/test/config.yaml: the deterministic demo models
demo-fast and demo-weak, generous limits, its own reference) on a smaller suite: the first
`--per-track` items of every Lite track, `--solver-tasks` of its Solver tasks (every instance of
them, so the relative scores are computed against the reference). One workflow runs alone first,
then `--workflows` at once; every one's results are reduced to what must not depend on the
machine's load (`fingerprint`: each instance record's status, A, claimed, solved and reward, each
relative score, proof verdict, row score and the Index) and compared with the run alone.

    python benchmarks/soak_workflows.py                  # 3 workflows, --cores 1 each
    python benchmarks/soak_workflows.py --workflows 3 --cores 1 --keep --out /tmp/soak

Prints one JSON summary (wall times, record counts, differences) and exits 1 on any difference,
any failed workflow or any infrastructure_error record. tests/integration/test_soak_workflows.py
runs it at its smallest.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
BASE_CONFIG = "config/test/config.yaml"
SOAK_CONFIG = "config/soak.yaml"
SOAK_SUITE = "config/suites/soak.yaml"


def make_workspace(dest: Path, config: dict, suite: dict) -> Path:
    """A private copy of the workflow at `dest` with the soak's config (SOAK_CONFIG) and suite."""
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copy2(ROOT / "Snakefile", dest / "Snakefile")
    for name in ("rules", "workflow", "config", "envs"):
        shutil.copytree(ROOT / name, dest / name)
    for model in config["models"]:
        shutil.copytree(ROOT / "solvers" / model["name"], dest / "solvers" / model["name"])
    (dest / "references").mkdir()
    (dest / "references" / "instances").symlink_to(ROOT / "references" / "instances")
    (dest / SOAK_SUITE).write_text(yaml.safe_dump(suite, sort_keys=False))
    (dest / SOAK_CONFIG).write_text(yaml.safe_dump(dict(config, suite=SOAK_SUITE), sort_keys=False))
    return dest


def soak_config(per_track: int, solver_tasks: int) -> tuple[dict, dict]:
    """(config, suite): the tiny test config on a suite of the first items of every Lite track."""
    config = yaml.safe_load((ROOT / BASE_CONFIG).read_text())
    lite = yaml.safe_load((ROOT / "config" / "suites" / "lite.yaml").read_text())
    tracks = {
        track: items[: solver_tasks if track == "solver" else per_track] for track, items in lite["tracks"].items()
    }
    run = dict(config.get("run") or {})
    run["task_files"] = {k: v for k, v in (run.get("task_files") or {}).items() if k in tracks["solver"]}
    config.update(run=run, results_dir="results/soak")
    return config, {"id": "soak", "tracks": tracks}


def _env(ws: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '/usr/bin:/bin')}"
    env["TCSEXAM_ROOT"] = str(ws)
    env.pop("RAY_ADDRESS", None)
    return env


def start(ws: Path, cores: int) -> subprocess.Popen:
    """snakemake in `ws`, in its own session (a timeout kills it with every job it started)."""
    log = open(ws / "soak-snakemake.log", "w")  # noqa: SIM115 (closed with the process)
    argv = [str(BIN / "snakemake"), "--cores", str(cores), "--configfile", SOAK_CONFIG]
    proc = subprocess.Popen(argv, cwd=ws, env=_env(ws), stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    proc.log = log  # type: ignore[attr-defined]
    return proc


def finish(proc: subprocess.Popen, deadline: float) -> int:
    try:
        return proc.wait(timeout=max(1.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        return -9
    finally:
        proc.log.close()  # type: ignore[attr-defined]


def stop_ray_head(ws: Path, wait_s: float = 120) -> None:
    """Stop the workspace's Ray head and wait for the detached stop of `onsuccess` to end."""
    for state in (ws / "results").glob("*/.ray-head"):
        subprocess.run(
            [str(BIN / "tcsexam"), "runner", "ray-head", "stop", "--state-dir", str(state)],
            env=_env(ws),
            capture_output=True,
            timeout=60,
            check=False,
        )
    deadline = time.monotonic() + wait_s
    while list((ws / "results").glob("*/.ray-head.stopping-*")) and time.monotonic() < deadline:
        time.sleep(0.2)


RECORD_KEYS = ("status", "A", "claimed", "solved", "reward")


def _project(rel: Path, data) -> dict | None:
    """What of one result file must be the same in every run of the deterministic demos."""
    if rel.parent.name == "records" and isinstance(data, dict) and "instance" in data:
        return {k: data.get(k) for k in RECORD_KEYS}
    if rel.name == "relative.json":
        return {k: data.get(k) for k in ("relative_score", "score_status")}
    if rel.name == "verdict.json":
        return {k: data.get(k) for k in ("status", "complete", "resolution")}
    if rel.name == "row.json":
        return {k: data.get(k) for k in ("score", "score_status", "adoption_status")}
    if rel.name == "index.json" and rel.parent.name != ".checksums":
        return {
            "status": data.get("status"),
            "models": {m: {k: v.get(k) for k in ("status", "index", "track_means")} for m, v in data["models"].items()},
        }
    return None


def fingerprint(ws: Path) -> dict[str, dict]:
    """relative path -> the load-independent part of every result file (`_project`)."""
    out: dict[str, dict] = {}
    results = ws / "results" / "soak"
    for path in sorted(results.rglob("*.json")):
        rel = path.relative_to(results)
        if any(part.startswith(".") for part in rel.parts[:-1]):
            continue
        try:
            projected = _project(rel, json.loads(path.read_text()))
        except (OSError, ValueError, AttributeError, KeyError):
            projected = {"unreadable": True}
        if projected is not None:
            out[str(rel)] = projected
    return out


def counts(print_: dict[str, dict]) -> dict[str, int]:
    kinds = {"instance_records": 0, "verdicts": 0, "relative_scores": 0, "rows": 0, "index": 0}
    for rel in print_:
        name = Path(rel).name
        kind = {"verdict.json": "verdicts", "relative.json": "relative_scores", "row.json": "rows"}.get(name)
        kind = kind or ("index" if name == "index.json" else "instance_records")
        kinds[kind] += 1
    return kinds


def differences(alone: dict[str, dict], other: dict[str, dict]) -> list[str]:
    found = [f"{rel}: only in the run alone" for rel in sorted(set(alone) - set(other))]
    found += [f"{rel}: not in the run alone" for rel in sorted(set(other) - set(alone))]
    found += [
        f"{rel}: {other[rel]} != {alone[rel]} (alone)"
        for rel in sorted(set(alone) & set(other))
        if other[rel] != alone[rel]
    ]
    return found


def infrastructure_errors(print_: dict[str, dict]) -> list[str]:
    return [rel for rel, data in print_.items() if data.get("status") == "infrastructure_error"]


def soak(
    out: Path, workflows: int = 3, cores: int = 1, per_track: int = 1, solver_tasks: int = 2, timeout_s: float = 3600
) -> dict:
    config, suite = soak_config(per_track, solver_tasks)
    summary: dict = {"workflows": workflows, "cores_each": cores, "suite": suite["tracks"]}
    alone_ws = make_workspace(out / "alone", config, suite)
    began = time.monotonic()
    rc = finish(start(alone_ws, cores), began + timeout_s)
    stop_ray_head(alone_ws)
    summary["alone"] = {"rc": rc, "wall_s": round(time.monotonic() - began, 1)}
    alone = fingerprint(alone_ws)
    summary["alone"].update(counts=counts(alone), infrastructure_errors=infrastructure_errors(alone))
    if rc != 0:
        summary["ok"] = False
        summary["error"] = f"the workflow alone failed ({rc}): see {alone_ws / 'soak-snakemake.log'}"
        return summary

    spaces = [make_workspace(out / f"w{k}", config, suite) for k in range(workflows)]
    began = time.monotonic()
    procs = [start(ws, cores) for ws in spaces]
    ends = []
    for proc in procs:
        ends.append((finish(proc, began + timeout_s), round(time.monotonic() - began, 1)))
    summary["concurrent_wall_s"] = round(time.monotonic() - began, 1)
    ok = True
    summary["concurrent"] = []
    for ws, (rc, wall) in zip(spaces, ends):
        stop_ray_head(ws)
        got = fingerprint(ws)
        diff = differences(alone, got)
        infra = infrastructure_errors(got)
        ok = ok and rc == 0 and not diff and not infra
        summary["concurrent"].append(
            {
                "workspace": ws.name,
                "rc": rc,
                "wall_s": wall,
                "counts": counts(got),
                "differences": diff,
                "infrastructure_errors": infra,
            }
        )
    summary["ok"] = ok and not summary["alone"]["infrastructure_errors"]
    return summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workflows", type=int, default=3, help="workflows at once (default 3)")
    parser.add_argument("--cores", type=int, default=1, help="snakemake --cores of each (default 1)")
    parser.add_argument("--per-track", type=int, default=1, help="items of each non-Solver Lite track (default 1)")
    parser.add_argument("--solver-tasks", type=int, default=2, help="Lite Solver tasks, every instance (default 2)")
    parser.add_argument("--out", type=Path, help="folder for the workspaces (default: a new one under /tmp)")
    parser.add_argument("--keep", action="store_true", help="keep the workspaces (default: removed when all equal)")
    parser.add_argument("--timeout-s", type=float, default=3600, help="hang guard for each phase")
    args = parser.parse_args(argv)
    out = args.out or Path(tempfile.mkdtemp(prefix="tcsexam-soak-workflows-"))
    out.mkdir(parents=True, exist_ok=True)
    out.chmod(0o755)  # a root harness runs the candidates as an unprivileged uid
    summary = soak(out, args.workflows, args.cores, args.per_track, args.solver_tasks, args.timeout_s)
    summary["out"] = str(out)
    print(json.dumps(summary, indent=1))
    if summary["ok"] and not args.keep:
        shutil.rmtree(out, ignore_errors=True)
    return 0 if summary["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
