"""Runner benchmark: the harness's added cost, timeout precision and parallel efficiency.

    .venv/bin/python benchmarks/runner.py [--runs 200] [--workers C] [--n N] [--t T]

Prints (no wall-clock assertion; ratios and milliseconds to compare across machines):

1. Added time per instance against a bare `subprocess.run` of the same trivial command
   (`sh -c 'echo 0 1 > SOLUTION'`, a valid MaxCut certificate), medians over --runs:
   - in-process: `run_instance` (limiter, sandbox, certificate check) + the record write;
   - pool: the same through the Ray pool with --workers actors (dispatch + result + record write),
     as worker-seconds per instance (wall * workers / runs) minus the bare median.
   The one-off Ray start and actor start are printed separately.
2. Timeout precision: a sleeping candidate under wall limit --t is dead by T + overshoot
   (target: overshoot < 0.2 s); a candidate that ignores SIGTERM is shown too (it pays the grace).
3. Efficiency: --n sleeping instances with limit --t on --workers warm actors against the ideal
   ceil(N/C) * T (target >= 0.95).
4. Sandboxes side by side (local, bwrap, docker; those that work here): the added time per
   instance of `run_instance` with the trivial command against the bare `subprocess.run` (medians
   over --sandbox-runs), and the timeout precision of a sleeping candidate under wall limit --t.
   For docker also the cost of a per-job container that starts a fresh process per instance
   (`docker exec` into a running container), the alternative to one container per instance.

Runs on any core count: --workers defaults to this job's CPUs.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tcsexam.errors import InputError
from tcsexam.records.store import RecordStore
from tcsexam.runner.limiter import Limits
from tcsexam.runner.ray.job import job_cpus, start_ray
from tcsexam.runner.ray.pool import RayPool
from tcsexam.runner.sandboxes import get_sandbox
from tcsexam.runner.solver.attempt import RunContext
from tcsexam.runner.solver.candidate import load_candidate
from tcsexam.runner.solver.execute import InstanceOptions, run_instance
from tcsexam.tasks import load_task


def _setup(root: Path, runs: int, wall_s: float) -> tuple[Path, dict[str, Path]]:
    (root / "inst").mkdir()
    (root / "inst" / "g.txt").write_text("2 1\n1 2 1\n")
    rows = "\n".join(f"- {{name: i{k:04d}, file: g.txt, best_known: 1}}" for k in range(runs))
    task = root / "bench.yaml"
    task.write_text(
        "id: bench\nproblem: maxcut\nkind: objective\ndirection: maximize\n"
        f"limits: {{wall_s: {wall_s}, mem_mb: 1024}}\ninstance_dir: {root / 'inst'}\n"
        f"instances:\n{rows}\n"
    )
    cands = {}
    for name, command in {
        "trivial": '["/bin/sh", "-c", "echo 0 1 > {solution}"]',
        "sleep": '["sleep", "1000"]',
        "stubborn": '["/bin/sh", "-c", "trap \\"\\" TERM; sleep 1000 & wait; sleep 1000"]',
    }.items():
        d = root / name
        d.mkdir()
        (d / "solver.yaml").write_text(f"command: {command}\nthreads: 1\n")
        cands[name] = d
    return task, cands


class TimedContext(RunContext):
    """A RunContext whose records carry the time each run took inside the actor (benchmark only)."""

    def run_one(self, name, scratch):
        t0 = time.perf_counter()
        record = super().run_one(name, scratch)
        record.extra["bench_inside_s"] = time.perf_counter() - t0
        return record


def _ms(x: float) -> str:
    return f"{x * 1000:.2f} ms"


def bench_overhead(task, cand_dir, root: Path, runs: int, workers: int, limiter: str):
    task_obj = load_task(task)
    cand = load_candidate(cand_dir)
    sandbox = get_sandbox("local")
    sandbox.check_available()
    limits = task_obj.limits.for_threads(1)
    sol = root / "bare.sol"
    argv = ["/bin/sh", "-c", f"echo 0 1 > {sol}"]
    for _ in range(5):
        subprocess.run(argv, check=True)
    bare = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(argv, check=True)
        bare.append(time.perf_counter() - t0)
    bare_med = statistics.median(bare)

    store = RecordStore(root / "records-inproc")
    store.prepare()
    inproc = []
    statuses = set()
    scratch_root = root / "scratch"
    scratch_root.mkdir()
    for _k, inst in enumerate(task_obj.instances[:runs]):
        t0 = time.perf_counter()
        scratch = tempfile.mkdtemp(dir=scratch_root)
        rec = run_instance(
            task_obj,
            inst,
            cand,
            sandbox=sandbox,
            limits=limits,
            seed=0,
            scratch_dir=scratch,
            options=InstanceOptions(limiter=limiter),
        )
        store.write(rec)
        inproc.append(time.perf_counter() - t0)
        statuses.add(rec.status)
    in_med = statistics.median(inproc)
    print(f"1. added time per instance (trivial command, median over {runs} runs)")
    print(f"   bare subprocess.run:            {_ms(bare_med)}")
    print(
        f"   run_instance + record write:    {_ms(in_med)}  (added {_ms(in_med - bare_med)}; "
        f"statuses {sorted(statuses)}; limiter {rec.limiter})"
    )

    t0 = time.perf_counter()
    handle = start_ray(num_cpus=workers)
    ray_s = time.perf_counter() - t0
    ctx = TimedContext(task=task_obj, candidate=cand, sandbox=get_sandbox("local"), limits=limits)
    pool = RayPool(ctx, workers=workers, max_retries=0)
    try:
        names = [inst.name for inst in task_obj.instances[:runs]]
        t0 = time.perf_counter()
        pool.run(names[:workers], lambda *a: None)  # start the actors (one-off)
        actors_s = time.perf_counter() - t0
        store2 = RecordStore(root / "records-pool")
        store2.prepare()
        seen = []

        inside = []

        def on_result(name, record, tries):
            inside.append(record.extra.pop("bench_inside_s"))
            store2.write(record)
            seen.append(record.status)

        t0 = time.perf_counter()
        pool.run(names, on_result)
        pool_wall = time.perf_counter() - t0
        per = pool_wall * workers / len(names)
        in_actor = statistics.mean(inside)
        print(
            f"   Ray pool, {workers} workers:         {_ms(per)} worker-time per instance "
            f"(added {_ms(per - bare_med)}; throughput {len(names) / pool_wall:.0f} instances/s; "
            f"{seen.count('ok')}/{len(seen)} ok)"
        )
        if pool.pipeline > 1:  # a call's time in the actor includes waiting for the other's program
            print(
                f"     run_instance in the actor {_ms(in_actor)} per call (median {_ms(statistics.median(inside))}) "
                f"on {pool.pipeline} run threads per actor, pipelined ({pool.calls} calls for {len(names)} "
                "instances): a run waits there for the other runs' programs, so no share of dispatch is derived"
            )
        else:
            print(
                f"     of which run_instance in the actor {_ms(in_actor)} (median "
                f"{_ms(statistics.median(inside))}); pool dispatch + result + record write "
                f"{_ms(per - in_actor)} per instance"
            )
        print(f"   one-off: Ray start {ray_s:.2f} s, {workers} actors ready {actors_s:.2f} s")
        return pool, handle
    except BaseException:
        pool.close()
        handle.shutdown()
        raise


def bench_timeout(task, cands, root: Path, t: float, reps: int, limiter: str) -> None:
    task_obj = load_task(task)
    inst = task_obj.instances[0]
    sandbox = get_sandbox("local")
    limits = Limits(wall_s=t, cpu_s=t * 10, mem_mb=1024, grace_s=0.5)
    print(f"2. timeout precision, wall limit T = {t:g} s ({reps} runs each)")
    for name in ("sleep", "stubborn"):
        cand = load_candidate(cands[name])
        over, statuses = [], set()
        for _ in range(reps):
            scratch = tempfile.mkdtemp(dir=root)
            t0 = time.perf_counter()
            rec = run_instance(
                task_obj,
                inst,
                cand,
                sandbox=sandbox,
                limits=limits,
                seed=0,
                scratch_dir=scratch,
                options=InstanceOptions(limiter=limiter),
            )
            over.append(time.perf_counter() - t0 - t)
            statuses.add(rec.status)
        note = "target < 0.2 s" if name == "sleep" else f"ignores SIGTERM: pays the {limits.grace_s:g} s grace"
        print(
            f"   {name:9s} dead by T + {max(over):.3f} s (median T + {statistics.median(over):.3f} s; "
            f"statuses {sorted(statuses)}; {note})"
        )


def bench_efficiency(pool: RayPool, task, cands, n: int, t: float, workers: int, limiter: str) -> None:
    task_obj = load_task(task)
    cand = load_candidate(cands["sleep"])
    limits = Limits(wall_s=t, cpu_s=t * 10, mem_mb=1024)
    pool.ctx = RunContext(task=task_obj, candidate=cand, sandbox=get_sandbox("local"), limits=limits, limiter=limiter)
    pool._ctx_ref = pool.ray.put(pool.ctx)
    for actor in list(pool.actors):  # fresh actors carry the new context
        pool._drop(actor)
    pool.run([i.name for i in task_obj.instances[:workers]], lambda *a: None)
    names = [i.name for i in task_obj.instances[:n]]
    statuses = []
    t0 = time.perf_counter()
    pool.run(names, lambda name, record, tries: statuses.append(record.status))
    wall = time.perf_counter() - t0
    ideal = math.ceil(n / workers) * t
    print(
        f"3. efficiency: {n} instances x limit {t:g} s on {workers} workers: "
        f"{wall:.2f} s against ideal {ideal:.2f} s -> {ideal / wall:.3f} (target >= 0.95; "
        f"{statuses.count('timeout')}/{n} timeout)"
    )


def _median_run(task_obj, inst, cand, box, limits, root: Path, runs: int) -> tuple[float, set[str]]:
    times, statuses = [], set()
    for _ in range(runs):
        scratch = tempfile.mkdtemp(dir=root)
        t0 = time.perf_counter()
        rec = run_instance(task_obj, inst, cand, sandbox=box, limits=limits, seed=0, scratch_dir=scratch)
        times.append(time.perf_counter() - t0)
        statuses.add(rec.status)
    return statistics.median(times), statuses


def bench_sandboxes(task, cands, root: Path, runs: int, t: float, reps: int, limiter: str) -> None:
    task_obj = load_task(task)
    inst = task_obj.instances[0]
    argv = ["/bin/sh", "-c", f"echo 0 1 > {root / 'bare.sol'}"]
    bare = []
    for _ in range(max(runs, 20)):
        t0 = time.perf_counter()
        subprocess.run(argv, check=True)
        bare.append(time.perf_counter() - t0)
    bare_med = statistics.median(bare)
    print(
        f"4. sandboxes side by side (median over {runs} runs; bare subprocess.run {_ms(bare_med)}; limit T = {t:g} s)"
    )
    print(f"   {'sandbox':9s} {'per instance':>13s} {'added':>11s}   timeout: dead by T + (max / median)")
    trivial, sleep = load_candidate(cands["trivial"]), load_candidate(cands["sleep"])
    for name in ("local", "bwrap", "docker"):
        box = get_sandbox(name)
        try:
            box.check_available()
        except InputError as exc:
            print(f"   {name:9s} not measured: {exc}")
            continue
        limits = task_obj.limits.for_threads(1)
        _median_run(task_obj, inst, trivial, box, limits, root, 2)  # warm caches
        med, statuses = _median_run(task_obj, inst, trivial, box, limits, root, runs)
        tl = Limits(wall_s=t, cpu_s=t * 10, mem_mb=1024, grace_s=0.5)
        over = []
        for _ in range(reps):
            scratch = tempfile.mkdtemp(dir=root)
            t0 = time.perf_counter()
            rec = run_instance(
                task_obj,
                inst,
                sleep,
                sandbox=box,
                limits=tl,
                seed=0,
                scratch_dir=scratch,
                options=InstanceOptions(limiter=limiter),
            )
            over.append(time.perf_counter() - t0 - t)
            statuses.add(rec.status)
        print(
            f"   {name:9s} {_ms(med):>13s} {_ms(med - bare_med):>11s}   T + {max(over):.3f} s / "
            f"T + {statistics.median(over):.3f} s  (statuses {sorted(statuses)})"
        )
        if name == "docker":
            _bench_docker_exec(box, runs)


def _bench_docker_exec(box, runs: int) -> None:
    """A per-job container: `docker exec` of a fresh process per instance into one running container."""
    client = box.client()
    container = client.containers.run(
        box.image, ["sleep", "3600"], detach=True, network_disabled=True, read_only=True, cap_drop=["ALL"]
    )
    try:
        times = []
        for _ in range(runs):
            t0 = time.perf_counter()
            container.exec_run(["/bin/sh", "-c", "echo 0 1 > /dev/null"])
            times.append(time.perf_counter() - t0)
        print(
            f"   docker exec into a per-job container: {_ms(statistics.median(times))} per instance "
            "(not adopted: see docs/runner.md, Security)"
        )
    finally:
        container.remove(force=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=200, help="runs for the overhead medians")
    ap.add_argument("--workers", type=int, default=None, help="C: Ray workers (default: job CPUs)")
    ap.add_argument("--n", type=int, default=None, help="N instances for the efficiency (default 4*C)")
    ap.add_argument("--t", type=float, default=1.0, help="T: wall limit of the sleeping runs (s)")
    ap.add_argument("--timeout-reps", type=int, default=5)
    ap.add_argument("--limiter", default="auto", choices=["auto", "light", "cgroup", "benchexec"])
    ap.add_argument("--sandbox-runs", type=int, default=30, help="runs per sandbox for section 4")
    ap.add_argument("--only-sandboxes", action="store_true", help="run section 4 only (no Ray)")
    args = ap.parse_args(argv)
    workers = args.workers or job_cpus()
    n = args.n or 4 * workers
    with tempfile.TemporaryDirectory(prefix="tcsexam-bench-") as tmp:
        root = Path(tmp)
        task, cands = _setup(root, max(args.runs, n, workers), wall_s=10.0)
        load = os.getloadavg()[0]
        print(
            f"runner benchmark: {workers} workers, {job_cpus()} CPUs in this job, limiter "
            f"{args.limiter}, load average {load:.1f}, python {sys.version.split()[0]}"
        )
        if args.only_sandboxes:
            bench_sandboxes(task, cands, root, args.sandbox_runs, args.t, args.timeout_reps, args.limiter)
            return 0
        pool, handle = bench_overhead(task, cands["trivial"], root, args.runs, workers, args.limiter)
        try:
            bench_timeout(task, cands, root, args.t, args.timeout_reps, args.limiter)
            bench_efficiency(pool, task, cands, n, args.t, workers, args.limiter)
            bench_sandboxes(task, cands, root, args.sandbox_runs, args.t, args.timeout_reps, args.limiter)
        finally:
            pool.close()
            handle.shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
