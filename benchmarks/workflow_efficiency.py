"""Efficiency of a whole workflow run, and what it spends beyond the work it exists for.

Runs `snakemake --cores C` on a config from scratch (a fresh results folder), then prints

    wall time / ideal,   ideal = (the work) / C

where the work is what a run cannot do without: the candidates' own time (the Solver records'
`wall_s`, the construction programs' records) and the checkers' own time (Coq: each proof's
verdict.json `wall_s`; DRAT: each UNSAT record's `unsat_proof.check_s`; the construction
checker of a static object: its record's `wall_s`; a construction program's record holds the
program's run, counted with the candidates). Everything else is overhead, itemised from Snakemake's own
metadata (.snakemake/metadata: each job's rule, start and end) and the Solver jobs' run.log:

    DAG            snakemake's start to its first job (parsing, config checks, the DAG)
    job start      Solver jobs' time beyond their runs and DRAT checks (Python, task, hashes,
                   calibration, records), Ray connect apart
    Ray connect    the Solver jobs' Ray start or connect, as their run.log says ("started in")
    checks         proof_check beyond Coq's time (its row included since aa0043d), construction_run
                   beyond program and checker, scan_candidate
    scoring        the rows and scores (attempts_solver_row, construction_row, proof_row in a
                   checkout before aa0043d, attempts_verdict_rows, attempts_missing_row, score)
    attempt table  attempts_cohort, attempts_table, attempts_generation
    plots          attempts_plots
    explorer       view (the results explorer and the report's HTML)
    report         manifest
    other          any other rule
    idle           wall time x cores not covered by any job (a core waiting on the DAG, on a
                   dependency, on the serial tail)

Job items are in core-seconds (each job holds its `threads` cores, 1 here); `/ C` gives their share
of the wall time, and the items, the ideal and `idle` add up to wall x C. "after the last Solver
job" is the wall time from the last Solver job's end to the run's end (the small rules' tail).
"Snakemake's own CPU" is the CPU time of the snakemake process itself (its start, the DAG, the
scheduling, each job's handling and metadata; not its children: the jobs, the fork server),
read from /proc while it runs: not an item of its own, it is spent on the same cores.

With `--baseline-root DIR` (a checkout of an earlier commit, e.g. `git worktree add DIR <commit>`)
each round runs the workflow there too (its Snakefile, its `src` first on PYTHONPATH), the two in
alternating order, and prints the ratios current / baseline of the medians: on a shared machine only
ratios from alternating runs mean something. The load average is printed with every run.

    .venv/bin/python benchmarks/workflow_efficiency.py [--configfile config/config.yaml] [--cores 2]
        [--ray auto|shared|job] [--rounds 1] [--baseline-root DIR] [--results-dir DIR] [--keep]
        [--snakemake-args '--scheduler greedy'] [--baseline-args '--scheduler ilp']
"""

from __future__ import annotations

import argparse
import base64
import glob
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: the overhead item of each rule's job time (beyond the work it holds, see `work_of_job`)
ITEMS = {
    "run": "job start",
    "proof_check": "checks",
    "construction_run": "checks",
    "scan_candidate": "checks",
    "attempts_solver_row": "scoring",
    "construction_row": "scoring",
    "proof_row": "scoring",  # a baseline before aa0043d: the proof's row was a job of its own
    "attempts_verdict_rows": "scoring",
    "attempts_missing_row": "scoring",
    "ingest_online": "scoring",
    "score": "scoring",
    "attempts_cohort": "attempt table",
    "attempts_table": "attempt table",
    "attempts_generation": "attempt table",
    "attempts_plots": "plots",
    "view": "explorer",
    "manifest": "report",
}
ORDER = ("DAG", "job start", "Ray connect", "checks", "scoring", "attempt table", "plots", "explorer", "report")


def job_times(metadata: Path, results: Path) -> list[tuple[float, float, str, list[str]]]:
    """(start, end, rule, outputs) of every job whose output lies under `results`, from Snakemake's
    own metadata (.snakemake/metadata: one JSON per output file, named by its urlsafe-base64 path,
    split into "@"-prefixed folders when long), one entry per job (its `job_hash`)."""
    jobs: dict = {}
    for path in metadata.rglob("*"):
        if not path.is_file():
            continue
        encoded = "".join(part.lstrip("@") for part in path.relative_to(metadata).parts)
        try:
            name = base64.urlsafe_b64decode(encoded).decode()
            meta = json.loads(path.read_text())
        except (ValueError, UnicodeDecodeError):
            continue
        if not name.startswith(str(results)) or meta.get("starttime") is None:
            continue
        key = meta.get("job_hash") or (meta["starttime"], meta["rule"])
        entry = jobs.setdefault(key, [meta["starttime"], meta["endtime"], meta["rule"], []])
        entry[3].append(name)
    return sorted(tuple(v) for v in jobs.values())


def _json(path: Path):
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def work_of_job(rule: str, outputs: list[str]) -> tuple[float, float]:
    """(candidates' seconds, checkers' seconds) a job holds, from the files it wrote."""
    folder = Path(outputs[0]).parent
    if rule == "run":
        records = _json(folder / "records.json") or []
        cand = sum(r.get("wall_s") or 0.0 for r in records)
        drat = sum(((r.get("extra") or {}).get("unsat_proof") or {}).get("check_s") or 0.0 for r in records)
        return cand, drat
    if rule == "proof_check":
        verdict = _json(folder / "verdict.json") or {}
        return 0.0, float(verdict.get("wall_s") or 0.0)
    if rule == "construction_run":
        # a record's wall_s is the program's run (solver.yaml) or, for a static object
        # (construction.txt), the exact checker's own time; checker.json repeats it (counted once)
        records = _json(folder / "records.json") or []
        static = [r for r in records if (r.get("extra") or {}).get("submission") == "construction.txt"]
        program = [r for r in records if r not in static]
        return sum(r.get("wall_s") or 0.0 for r in program), sum(r.get("wall_s") or 0.0 for r in static)
    return 0.0, 0.0


def ray_seconds(folder: Path) -> float:
    """A Solver job's Ray start or connect, and its wait for the shared head, from its run.log."""
    log = folder / "run.log"
    text = log.read_text(errors="replace") if log.is_file() else ""
    m = re.search(r"on (?:local )?Ray.*\(started in ([0-9.]+) s(?:; waited ([0-9.]+) s)?", text)
    return float(m.group(1)) + float(m.group(2) or 0.0) if m else 0.0


def itemise(jobs, cores: int, start_epoch: float, wall: float) -> dict:
    """The run's ideal, its overhead items (core-seconds) and its tail, from its jobs."""
    items: dict[str, float] = defaultdict(float)
    cand_s = check_s = busy = 0.0
    per_rule: dict[str, list[float]] = defaultdict(list)
    for start, end, rule, outputs in jobs:
        slot = end - start
        busy += slot
        cand, check = work_of_job(rule, outputs)
        cand_s, check_s = cand_s + cand, check_s + check
        beyond = max(0.0, slot - cand - check)
        if rule == "run":
            ray = min(beyond, ray_seconds(Path(outputs[0]).parent))
            items["Ray connect"] += ray
            beyond -= ray
        items[ITEMS.get(rule, "other")] += beyond
        per_rule[rule].append(slot)
    first = min((s for s, *_ in jobs), default=start_epoch)
    items["DAG"] = (first - start_epoch) * cores
    solver_end = max((e for _, e, rule, _ in jobs if rule == "run"), default=first)
    ideal = (cand_s + check_s) / cores
    items["idle"] = max(0.0, wall * cores - busy - items["DAG"])
    return {
        "wall": wall,
        "ideal": ideal,
        "candidates_s": cand_s,
        "checkers_s": check_s,
        "items": dict(items),
        "after_solver": start_epoch + wall - solver_end,
        "per_rule": {r: (len(v), sum(v)) for r, v in per_rule.items()},
        "solver_jobs": len(per_rule.get("run", [])),
    }


def console_script(root: Path) -> Path:
    """A folder with the `tcsexam` command of the checkout at `root` (its pyproject's entry
    point, run by this Python): the venv's own script is the current checkout's, and an earlier
    checkout may not have the module it names."""
    import tomllib

    entry = tomllib.loads((root / "pyproject.toml").read_text())["project"]["scripts"]["tcsexam"]
    module, function = entry.split(":")
    shims = Path(tempfile.mkdtemp(prefix="wf-eff-bin-"))
    script = shims / "tcsexam"
    script.write_text(f"#!{sys.executable}\nimport sys\nfrom {module} import {function}\nsys.exit({function}())\n")
    script.chmod(0o755)
    return shims


def split_config(args: list[str]) -> tuple[list[str], list[str]]:
    """(the other arguments, the KEY=VALUE items of every `--config` among `args`)."""
    rest: list[str] = []
    items: list[str] = []
    into = rest
    for arg in args:
        if arg == "--config":
            into = items
        elif arg.startswith("-"):
            into = rest
            rest.append(arg)
        else:
            into.append(arg)
    return rest, items


def run_watched(cmd: list[str], **kwargs) -> tuple[subprocess.CompletedProcess[str], float]:
    """Run `cmd` to its end, its output captured; with the CPU seconds of its own process (not
    its children: Snakemake's scheduling, job handling and metadata), as last read from /proc."""
    ticks = os.sysconf("SC_CLK_TCK")
    cpu = 0.0
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, text=True, **kwargs)
        while proc.poll() is None:
            try:
                fields = Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
                cpu = (int(fields[11]) + int(fields[12])) / ticks  # utime, stime
            except (OSError, IndexError, ValueError):
                pass
            time.sleep(0.25)
        out.seek(0)
        err.seek(0)
        return subprocess.CompletedProcess(cmd, proc.returncode, out.read(), err.read()), cpu


def run_once(root: Path, args, label: str, extra: list[str], slot: str) -> dict | None:
    """One run from scratch: its results in `<--results-dir>/<slot>` (each run a folder of its own),
    or a fresh temporary folder."""
    results = Path(args.results_dir) / slot if args.results_dir else Path(tempfile.mkdtemp(prefix="wf-eff-"))
    bindir = Path(sys.executable).parent
    shims = console_script(root)
    env = dict(os.environ, PATH=f"{shims}{os.pathsep}{bindir}{os.pathsep}{os.environ.get('PATH', '')}")
    env["PYTHONPATH"] = str(root / "src")  # this checkout's package, also when run from a worktree
    cmd = [str(bindir / "snakemake"), "--cores", str(args.cores), "--configfile", args.configfile]
    extra, config = split_config(extra)  # one --config (Snakemake keeps only the last one given)
    cmd += [*extra, "--config", *config, f"results_dir={results}", f"run={{'ray': '{args.ray}'}}"]
    load_before = os.getloadavg()[0]
    start, start_epoch = time.perf_counter(), time.time()
    proc, snakemake_cpu = run_watched(cmd, cwd=root, env=env)
    wall = time.perf_counter() - start
    shutil.rmtree(shims, ignore_errors=True)
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr[-4000:])
        return None
    jobs = job_times(root / ".snakemake" / "metadata", results)
    out = itemise(jobs, args.cores, start_epoch, wall)
    out["load"] = (load_before, os.getloadavg()[0])
    index = next(iter(glob.glob(str(results / "*" / "*" / "index.json"))), None)
    out["status"] = json.loads(Path(index).read_text())["status"] if index else "no index"
    out["jobs"] = len(jobs)
    out["snakemake_cpu"] = snakemake_cpu
    report(label, args, out)
    if not args.keep and not args.results_dir:
        shutil.rmtree(results, ignore_errors=True)
    return out


def report(label: str, args, r: dict) -> None:
    c = args.cores
    print(
        f"[{label}] {args.configfile}, {c} cores, ray {args.ray}: {r['jobs']} jobs ({r['solver_jobs']} Solver), "
        f"index {r['status']}; load {r['load'][0]:.2f} -> {r['load'][1]:.2f}"
    )
    print(f"  wall time                 {r['wall']:8.1f} s")
    print(
        f"  ideal                     {r['ideal']:8.1f} s  (candidates {r['candidates_s']:.1f} s + checkers "
        f"{r['checkers_s']:.1f} s, / {c} cores)"
    )
    print(f"  wall / ideal              {r['wall'] / r['ideal'] if r['ideal'] else float('inf'):8.3f}")
    print("  overhead (core-s; / cores = its share of the wall):")
    for name in (*ORDER, "other", "idle"):
        value = r["items"].get(name, 0.0)
        if value or name in ORDER:
            print(f"    {name:14s} {value:8.1f} core-s  {value / c:7.1f} s  {value / c / r['wall']:6.1%} of the wall")
    if r["solver_jobs"]:
        per_job = (r["items"].get("job start", 0.0) + r["items"].get("Ray connect", 0.0)) / r["solver_jobs"]
        print(f"  per Solver job beyond its runs: {per_job:.2f} s")
    print(f"  after the last Solver job {r['after_solver']:8.1f} s")
    print(f"  Snakemake's own CPU       {r['snakemake_cpu']:8.1f} s  (its scheduling, job handling, metadata)")
    top = sorted(r["per_rule"].items(), key=lambda kv: -kv[1][1])[:8]
    print("  job time by rule: " + ", ".join(f"{rule} {n} x {t / n:.2f} s" for rule, (n, t) in top))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--configfile", default="config/config.yaml")
    ap.add_argument("--cores", type=int, default=len(os.sched_getaffinity(0)))
    ap.add_argument("--ray", choices=("auto", "shared", "job"), default="auto")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--baseline-root", type=Path, default=None, help="a checkout to compare with (alternating)")
    ap.add_argument("--snakemake-args", default="", help="more snakemake arguments, e.g. '--scheduler greedy'")
    ap.add_argument(
        "--baseline-args", default=None, help="the baseline's snakemake arguments (alone: this checkout as baseline)"
    )
    ap.add_argument(
        "--results-dir",
        default=None,
        help="each run's results in DIR/<current|baseline>-<round> (default: a fresh temporary folder)",
    )
    ap.add_argument("--keep", action="store_true", help="keep the results folder")
    args = ap.parse_args()
    if args.baseline_args is not None and args.baseline_root is None:
        args.baseline_root = ROOT
    extra = {"current": args.snakemake_args.split(), "baseline": (args.baseline_args or "").split()}
    roots = [("current", ROOT)] + ([("baseline", args.baseline_root.resolve())] if args.baseline_root else [])
    runs: dict[str, list[dict]] = {label: [] for label, _ in roots}
    slots = [f"{label}-{r + 1}" for r in range(args.rounds) for label, _ in roots]
    taken = [s for s in slots if args.results_dir and (Path(args.results_dir) / s).exists()]
    if taken:  # a run from scratch only: never a folder an earlier run left
        sys.stderr.write(f"workflow_efficiency: {Path(args.results_dir) / taken[0]} exists; give a new --results-dir\n")
        return 2
    for r in range(args.rounds):
        for label, root in roots if r % 2 == 0 else roots[::-1]:
            name = f"{label} {r + 1} {' '.join(extra[label])}".strip()
            out = run_once(root, args, name, extra[label], f"{label}-{r + 1}")
            if out is None:
                return 1
            runs[label].append(out)
    if args.baseline_root:
        med = lambda label, f: statistics.median(f(x) for x in runs[label])  # noqa: E731
        print(f"current / baseline, medians of {args.rounds} alternating round(s):")
        for name, f in (
            ("wall", lambda x: x["wall"]),
            ("wall / ideal", lambda x: x["wall"] / x["ideal"]),
            ("after the last Solver job", lambda x: x["after_solver"]),
            ("Snakemake's own CPU", lambda x: x["snakemake_cpu"]),
            ("DAG", lambda x: x["items"].get("DAG", 0.0)),
            (
                "per Solver job beyond its runs",
                lambda x: (
                    (x["items"].get("job start", 0) + x["items"].get("Ray connect", 0)) / max(1, x["solver_jobs"])
                ),
            ),
            *((item, (lambda i: lambda x: x["items"].get(i, 0.0))(item)) for item in ORDER[1:]),
        ):
            cur, base = med("current", f), med("baseline", f)
            ratio = f"{cur / base:.2f}" if base else "-"
            print(f"  {name:32s} {cur:8.2f} vs {base:8.2f}  ratio {ratio}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
