"""Harness throughput at Full scale: N instances of a candidate that answers in about 10 ms,
through `tcsexam run` on all cores, against a bare `xargs -P <cores>` loop of the same command over
the same files (no limiter, no sandbox, no checker, no records).

    .venv/bin/python benchmarks/throughput.py [--n 2000] [--workers CORES] [--sleep-ms 10] [--own-ray]
                                              [--sandbox NAME] [--no-local] [--rounds 3] [--start-runs 5]

The xargs loops and the harness runs alternate in `--rounds` rounds (each other round in reverse
order); times are medians and ratios the medians of the rounds' ratios, so that a change of load
during the benchmark cannot bias a ratio. It works as root (the bwrap loop's command then runs as
the candidate uid, `TCSEXAM_CANDIDATE_UID`, which gets its output folder) and as a user.

Prints instances per second and the ratio tcsexam / xargs (target >= 0.8) for:
  - the same xargs loop with each command inside the same bwrap sandbox the harness builds (what
    the isolation alone costs: the ceiling of any harness that runs each instance in bwrap), and
    the harness's ratio against that loop (what the harness itself adds);
  - `tcsexam run --ray-head DIR` on a Ray head started beforehand (what a workflow's Solver job
    does: the workflow starts one head for the whole run), with the default sandbox (auto: bwrap
    where it works), and split into its start (the command's start until its first record:
    Python, the task file, hashing, the Ray connection, the actors) and its steady rate (the
    records' write times from the 10th percentile on) against xargs' rate;
  - the same with `--sandbox local` (unless --no-local): what the isolation itself costs;
  - with --own-ray also `tcsexam run` starting its own local Ray (what a job alone on a cluster
    node does: the Ray start is paid once per job, so it matters for short jobs only),
  - the resume: the same command again with every record present (nothing runs);
  - the start split (unless --start-runs 0): a one-instance `tcsexam run` from its process start to
    its first instance dispatched and to its record, median of N: the default (`--pool auto`: one
    instance runs in process, no Ray), and with `--pool ray` starting its own lean Ray, the same
    with the previous start (TCSEXAM_RAY_LEAN=0, the baseline of the ratio), reusing the head
    (`--ray-head`) and joining it as the default head (no flag, `tcsexam runner ray-head start`).
The load average is printed before and after: on a shared machine the numbers move with it.
Not a test: nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

BIN = Path(sys.executable).parent


def setup(root: Path, n: int, sleep_ms: int) -> tuple[Path, Path, list[Path]]:
    inst = root / "instances"
    inst.mkdir(parents=True)
    files = []
    for k in range(n):
        path = inst / f"g{k:05d}.txt"
        path.write_text(f"2 1\n1 2 {1 + k % 3}\n")  # a 2-vertex MaxCut graph: `0 1` is a valid cut
        files.append(path)
    task = {
        "id": "throughput",
        "problem": "maxcut",
        "kind": "objective",
        "direction": "maximize",
        "limits": {"wall_s": 5, "mem_mb": 512},
        "instance_dir": str(inst),
        "instances": [{"name": p.stem, "file": p.name} for p in files],
    }
    task_file = root / "throughput.yaml"
    task_file.write_text(yaml.safe_dump(task, sort_keys=False))
    cand = root / "candidate"
    cand.mkdir()
    script = f'sleep {sleep_ms / 1000:.3f}; echo 0 1 > "$1"'
    (cand / "solver.yaml").write_text(yaml.safe_dump({"command": ["sh", "-c", script, "cand", "{solution}"]}))
    return task_file, cand, files


def bare(files: list[Path], out: Path, workers: int, sleep_ms: int, bwrap: bool = False) -> float:
    """xargs -P over the same command; `bwrap`: each command inside the bwrap sandbox the harness
    builds (same flags and mounts, the output folder the writable one), no harness around it."""
    out.mkdir()
    if bwrap:
        from tcsexam.runner.sandboxes.runas import candidate_ids

        ids = candidate_ids()
        if ids is not None:  # as root the sandboxed command runs as this unprivileged uid (as in the harness)
            os.chown(out, *ids)
            out.parent.chmod(out.parent.stat().st_mode | 0o011)  # the 0700 temp root: traversable, not listable
    listing = "\n".join(str(out / f"{p.stem}.sol") for p in files) + "\n"
    script = f'sleep {sleep_ms / 1000:.3f}; echo 0 1 > "$1"'
    command = ["sh", "-c", script, "cand", "{}"]
    if bwrap:
        from tcsexam.runner.limiter import RunPaths
        from tcsexam.runner.sandboxes.bwrap import BwrapSandbox

        command = BwrapSandbox().command(command, cwd=str(out), paths=RunPaths(writable_paths=[str(out)]))
    start = time.perf_counter()
    subprocess.run(["xargs", "-P", str(workers), "-I{}", *command], input=listing, text=True, check=True)
    if len(list(out.glob("*.sol"))) != len(files):
        raise SystemExit(f"the xargs loop in {out} did not write every answer")
    return time.perf_counter() - start


def steady(records: Path, start: float) -> tuple[float, float]:
    """(seconds from the command's start to its first record, records per second from the 10th
    percentile of the records' write times to the last)."""
    times = sorted(p.stat().st_mtime for p in records.glob("*.json"))
    lo = len(times) // 10
    span = times[-1] - times[lo]
    return times[0] - start, (len(times) - 1 - lo) / span if span > 0 else float("nan")


def tcsexam_run(
    task: Path,
    cand: Path,
    out: Path,
    workers: int,
    head: Path | None,
    sandbox: str | None,
    quiet: bool = False,
    pool: str = "auto",
) -> tuple[float, float]:
    """(seconds the command took, its start as a wall-clock time, to compare with file times)"""
    cmd = [str(BIN / "tcsexam"), "run", "--task", str(task), "--candidate", str(cand), "--attempt", "1", "--pool", pool]
    if sandbox:
        cmd += ["--sandbox", sandbox]
    cmd += ["--output", str(out / "records.json"), "--workers", str(workers), "--no-progress"]
    if head is not None:
        cmd += ["--ray-head", str(head)]
    start = time.perf_counter()
    wall_start = time.time()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr[-2000:])
        raise SystemExit(f"tcsexam run failed ({proc.returncode})")
    if quiet:
        return elapsed, wall_start
    last = [line for line in proc.stderr.splitlines() if "instances (" in line]
    print(f"    {last[-1] if last else proc.stderr.strip().splitlines()[-1]}")
    return elapsed, wall_start


def harness(task: Path, cand: Path, out: Path, workers: int, head: Path, sandbox: str | None):
    """(seconds, seconds to the first record, steady rate) of one `tcsexam run --ray-head`."""
    t_run, wall_start = tcsexam_run(task, cand, out, workers, head, sandbox)
    return (t_run, *steady(out / "records", wall_start))


def start_split(root: Path, cand: Path, head: Path, workers: int, runs: int, sandbox: str | None) -> None:
    """The start of a standalone `tcsexam run` on one instance: from the command's start to its
    first instance dispatched (`dispatched`), median of `runs`, for the run starting
    its own lean Ray (the default), the same with the previous Ray start (TCSEXAM_RAY_LEAN=0), a run
    reusing the running head (`--ray-head`) and one joining it as the user's default head (no
    flag: TCSEXAM_RAY_HEAD names it), alternating so that load drift cancels."""
    one = root / "one.yaml"
    spec = yaml.safe_load((root / "throughput.yaml").read_text())
    spec["instances"] = spec["instances"][:1]
    one.write_text(yaml.safe_dump(spec, sort_keys=False))
    ways = [  # (label, --ray-head, TCSEXAM_RAY_LEAN, TCSEXAM_RAY_HEAD: the default head joined, --pool)
        ("in process (auto, default)", None, "1", "none", "auto"),
        ("own Ray, lean", None, "1", "none", "ray"),
        ("own Ray, previous start", None, "0", "none", "ray"),
        ("reusing the head", head, "1", "none", "ray"),
        ("joining the default head", None, "1", str(head), "ray"),
    ]
    firsts: dict[str, list[float]] = {label: [] for label, *_ in ways}
    records_at: dict[str, list[float]] = {label: [] for label, *_ in ways}
    for r in range(runs):
        for label, use_head, lean, default_head, pool in ways if r % 2 == 0 else ways[::-1]:
            out = root / f"start-{label.replace(' ', '-').replace(',', '')}-{len(firsts[label])}"
            saved = {k: os.environ.get(k) for k in ("TCSEXAM_RAY_LEAN", "TCSEXAM_RAY_HEAD")}
            os.environ.update(TCSEXAM_RAY_LEAN=lean, TCSEXAM_RAY_HEAD=default_head)
            try:
                _, wall_start = tcsexam_run(one, cand, out, workers, use_head, sandbox, quiet=True, pool=pool)
            finally:
                for k, v in saved.items():
                    if v is None:
                        os.environ.pop(k, None)
                    else:
                        os.environ[k] = v
            record = json.loads((out / "records.json").read_text())[0]
            firsts[label].append(dispatched(record, out) - wall_start)
            records_at[label].append(next((out / "records").glob("*.json")).stat().st_mtime - wall_start)
    base = statistics.median(firsts["own Ray, previous start"])
    print(f"start split (process start to first instance dispatched, and to its record; median of {runs}):")
    for label, values in firsts.items():
        med = statistics.median(values)
        print(
            f"  {label:26s} {med:6.2f} s  (min {min(values):.2f}, max {max(values):.2f})  ratio {med / base:.2f} of previous"
            f"; first record {statistics.median(records_at[label]):.2f} s"
        )


def dispatched(record: dict, out: Path) -> float:
    """The wall-clock time the instance started: its record file's time less its wall time (the
    record write after it is a few milliseconds)."""
    path = next((out / "records").glob("*.json"))
    return path.stat().st_mtime - float(record.get("wall_s") or 0.0)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--sleep-ms", type=int, default=10)
    ap.add_argument("--own-ray", action="store_true", help="also time a run that starts its own Ray")
    ap.add_argument("--sandbox", default=None, help="passed to tcsexam run (default: its own default, auto)")
    ap.add_argument("--rounds", type=int, default=3, help="alternating rounds of the loops (default 3)")
    ap.add_argument("--start-runs", type=int, default=5, help="runs per way in the start split (0: none)")
    ap.add_argument("--no-local", action="store_true", help="skip the run with --sandbox local")
    args = ap.parse_args()
    root = Path(tempfile.mkdtemp(prefix="tcsexam-throughput-"))
    env_path = f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"
    os.environ["PATH"] = env_path
    try:
        task, cand, files = setup(root, args.n, args.sleep_ms)
        n, c = args.n, args.workers
        print(f"{n} instances, candidate sleeps {args.sleep_ms} ms, {c} worker(s) on {os.cpu_count()} CPU(s)")
        print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        head = root / "ray-head"
        t0 = time.perf_counter()
        subprocess.run(
            [str(BIN / "tcsexam"), "runner", "ray-head", "start", "--state-dir", str(head), "--num-cpus", str(c)],
            check=True,
            capture_output=True,
        )
        print(f"shared Ray head started in {time.perf_counter() - t0:.2f} s (once per workflow run)")
        try:
            loops = [("xargs", lambda out: bare(files, out, c, args.sleep_ms))]
            if shutil.which("bwrap") and args.sandbox in (None, "auto", "bwrap"):
                loops.append(("bwrap", lambda out: bare(files, out, c, args.sleep_ms, bwrap=True)))
            loops.append(("head", lambda out: harness(task, cand, out, c, head, args.sandbox)))
            if not args.no_local and args.sandbox != "local":
                loops.append(("head-local", lambda out: harness(task, cand, out, c, head, "local")))
            times: dict[str, list[float]] = {name: [] for name, _ in loops}
            splits: dict[str, list[tuple[float, float]]] = {}
            for r in range(args.rounds):  # alternating rounds (reversed every other one): load drift cancels
                for name, loop in loops if r % 2 == 0 else loops[::-1]:
                    result = loop(root / f"{name}-{r}")
                    if isinstance(result, tuple):
                        times[name].append(result[0])
                        splits.setdefault(name, []).append(result[1:])
                    else:
                        times[name].append(result)
            ratio = lambda a, b: statistics.median(x / y for x, y in zip(times[a], times[b], strict=True))  # noqa: E731
            t_bare = statistics.median(times["xargs"])
            print(f"{args.rounds} alternating round(s); medians, ratios are medians of the rounds' ratios")
            print(f"xargs -P {c}:                 {t_bare:7.2f} s  {n / t_bare:8.1f} inst/s  (baseline)")
            if "bwrap" in times:
                t_box = statistics.median(times["bwrap"])
                print(
                    f"  the same, each in bwrap:    {t_box:7.2f} s  {n / t_box:8.1f} inst/s  ratio "
                    f"{ratio('xargs', 'bwrap'):.2f} of xargs (the isolation alone: no harness can beat this with bwrap)"
                )
            for name, label in (
                ("head", "tcsexam run --ray-head:     "),
                ("head-local", "  the same, --sandbox local:"),
            ):
                if name not in times:
                    continue
                t_run = statistics.median(times[name])
                first = statistics.median(f for f, _ in splits[name])
                rate = statistics.median(q for _, q in splits[name])
                print(
                    f"{label}  {t_run:7.2f} s  {n / t_run:8.1f} inst/s  ratio {ratio('xargs', name):.2f} of xargs"
                    f"  (first record after {first:.2f} s, then {rate:.1f} inst/s: ratio {rate / (n / t_bare):.2f})"
                )
                if name == "head" and "bwrap" in times:
                    print(
                        f"    the harness alone: ratio {ratio('bwrap', name):.2f} of xargs with each command in bwrap"
                    )
            t_resume, _ = tcsexam_run(task, cand, root / "head-0", c, head, args.sandbox)
            print(f"the same again (all reused):  {t_resume:7.2f} s  (resume cost, nothing runs)")
            if args.start_runs:
                start_split(root, cand, head, c, args.start_runs, args.sandbox)
        finally:
            subprocess.run(
                [str(BIN / "tcsexam"), "runner", "ray-head", "stop", "--state-dir", str(head)], capture_output=True
            )
        if args.own_ray:
            os.environ["TCSEXAM_RAY_HEAD"] = "none"  # its own Ray even where the user's default head runs
            t_local, _ = tcsexam_run(task, cand, root / "local", c, None, args.sandbox)
            print(
                f"tcsexam run (own Ray start):  {t_local:7.2f} s  {n / t_local:8.1f} inst/s  "
                f"ratio {t_bare / t_local:.2f} of xargs"
            )
        first = json.loads((root / "head-0" / "records.json").read_text())[0]
        print(f"sandbox {first.get('sandbox')}, limiter {first.get('limiter')} (as recorded)")
        records = root / "head-0" / "records"
        size = sum(p.stat().st_size for p in records.rglob("*") if p.is_file())
        print(f"records: {size / 1e6:.2f} MB for {n} instances ({size / n:.0f} bytes each) + records.json")
        print(f"load average after:  {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
