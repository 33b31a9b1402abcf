"""Anytime traces and machine calibration: what they cost (issue 25, Deliver 4).

    .venv/bin/python benchmarks/anytime.py [--certificates 2000] [--repeats 10] [--instance G1] [--pairs 5]

Prints (no wall-clock assertion; milliseconds and ratios against a baseline in this process):

1. Trace overhead per certificate: a real candidate (under `local`) rewrites `{solution}` (temp
   file + rename) --certificates times on an anytime copy of maxcut-mqlib; the watcher thread's
   own CPU time (`trace_info.harness_cpu_s`) per certificate it saw, against a baseline of a bare
   open + read + close of the same file in this process (target: under 1 ms per certificate).
   Also the harness's time outside the program (run_instance's wall time minus the program's own
   wall time: preparation, post-run check, record) on the anytime task against the same candidate
   on the non-anytime task (alternating --pairs runs, medians): the difference is the post-run
   check of the kept trace. (The program's own wall time is not compared: on a shared machine it
   varies far more than the watcher's cost.)
2. Calibration spread: --repeats measurements each of a job's (`calibrate()`), the run's (the fork
   server's `run_measurement()`) and a minimum of 3 x REPEATS repetitions, alternating:
   mean, standard deviation and coefficient of variation of each part's seconds and of the
   overall speed. `--calibration-only` runs this section alone.
3. Checker time per trace entry: `check_certificate` of one --instance certificate (maxcut-mqlib)
   against parsing the instance (the work a final certificate costs anyway).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from tcsexam.runner.observers.calibrate import REPEATS, RUN_MEASUREMENTS, calibrate, run_measurement
from tcsexam.runner.sandboxes import get_sandbox
from tcsexam.runner.solver.candidate import load_candidate
from tcsexam.runner.solver.execute import run_instance
from tcsexam.tasks import load_task

WRITER = """
import os, sys
n, src, out = int(sys.argv[1]), open(sys.argv[2]).read(), sys.argv[3]
for i in range(n):
    tmp = out + ".tmp"
    with open(tmp, "w") as fh:
        fh.write(src if i % 2 else src + "\\n")  # two contents in turn: each write is a new certificate
    os.replace(tmp, out)
"""


def _certificate(task, name: str) -> str:
    inst = task.instance(name)
    n = int(inst.meta.get("n") or open(inst.path).read().split()[0])
    return " ".join("01"[i % 2] for i in range(n)) + "\n"  # no value line: the checker recomputes the cut


def _task_copy(root: Path, anytime: bool):
    src = load_task("maxcut-mqlib")
    text = src.source.read_text().replace("anytime: true\n", "")
    text = text.replace("limits:", "anytime: true\nlimits:", 1) if anytime else text
    text = text.replace("instance_dir: references/", f"instance_dir: {src.source.parents[2]}/references/")
    path = root / f"task-{anytime}.yaml"
    path.write_text(text)
    return load_task(path)


def trace_overhead(n: int, instance: str, pairs: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        plain_task, any_task = _task_copy(root, False), _task_copy(root, True)
        cand = root / "cand"
        cand.mkdir()
        # the certificate to copy sits in the candidate's folder: the candidate may run as another
        # uid (local as root) that cannot enter this private temporary folder
        cert = cand / "cert.txt"
        cert.write_text(_certificate(any_task, instance))
        (cand / "w.py").write_text(WRITER)
        (cand / "solver.yaml").write_text(f"command: [python3, w.py, '{n}', cert.txt, '{{solution}}']\n")
        candidate = load_candidate(cand)
        limits = any_task.limits.for_threads(1)
        walls: dict[str, list[float]] = {"plain": [], "anytime": []}
        for _ in range(pairs):  # alternating, medians: a busy machine's drift hits both alike
            for label, task in (("plain", plain_task), ("anytime", any_task)):
                t0 = time.perf_counter()
                rec = run_instance(
                    task,
                    instance,
                    candidate,
                    sandbox=get_sandbox("local"),
                    limits=limits,
                    seed=0,
                    scratch_dir=root / f"s-{label}",
                )
                walls[label].append(time.perf_counter() - t0 - (rec.wall_s or 0.0))
        info = rec.extra["trace_info"]
        if rec.status != "ok" or not info["certificates_seen"]:
            raise SystemExit(f"the writer candidate did not run as intended: {rec.status}: {rec.message}")
        per_cert_ms = info["harness_cpu_s"] / max(1, info["certificates_seen"]) * 1e3
        t0 = time.thread_time()
        for _ in range(n):
            with open(cert, "rb") as fh:
                fh.read()
        bare_ms = (time.thread_time() - t0) / n * 1e3
        print(
            f"1. trace overhead ({n} certificates written, {len(cert.read_bytes())} bytes each, watch {info['watch']})"
        )
        print(f"   certificates seen {info['certificates_seen']}, kept and checked {info['kept']}")
        print(
            f"   watcher CPU per certificate {per_cert_ms:.3f} ms; bare open+read {bare_ms:.3f} ms; ratio "
            f"{per_cert_ms / bare_ms:.1f}x (target: under 1 ms)"
        )
        pw, aw = statistics.median(walls["plain"]), statistics.median(walls["anytime"])
        print(
            f"   harness time outside the program (run_instance wall - program wall), medians of {pairs}: plain "
            f"{pw * 1e3:.1f} ms, anytime {aw * 1e3:.1f} ms (ratio {aw / pw:.2f}; the difference is mostly checking "
            f"the {info['kept']} kept certificates after the run)"
        )


def calibration_spread(repeats: int) -> None:
    ways = {
        f"a job's own ({REPEATS} repetitions)": calibrate,
        f"the run's (fork server: median of {RUN_MEASUREMENTS})": run_measurement,
        f"a minimum of {3 * REPEATS} repetitions": lambda: calibrate(3 * REPEATS),
    }
    runs: dict[str, list[dict]] = {name: [] for name in ways}
    seconds = dict.fromkeys(ways, 0.0)
    for _ in range(repeats):
        for name, measure in ways.items():  # alternating: a drift of the machine's load reaches all alike
            t0 = time.perf_counter()
            runs[name].append(measure())
            seconds[name] += time.perf_counter() - t0
    for name, measured in runs.items():
        print(f"2. calibration spread, {name}: {repeats} measurements, {seconds[name] / repeats:.2f} s each")
        for key in ("python_s", "numpy_s", "speed"):
            vals = [r[key] for r in measured]
            mean, sd = statistics.mean(vals), statistics.stdev(vals)
            print(
                f"   {key:9s} mean {mean:.5f}  sd {sd:.5f}  CV {sd / mean * 100:.1f}%  min {min(vals):.5f}  "
                f"max {max(vals):.5f}"
            )


def checker_cost(instance: str, reps: int = 20) -> None:
    task = load_task("maxcut-mqlib")
    problem = task.problem_impl
    inst = task.instance(instance)
    cert = _certificate(task, instance).encode()
    t0 = time.perf_counter()
    parsed = problem.parse_instance(inst.path)
    parse_ms = (time.perf_counter() - t0) * 1e3
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        problem.check_certificate(parsed, cert, inst.meta)
        times.append((time.perf_counter() - t0) * 1e3)
    check_ms = statistics.median(times)
    print(
        f"3. checker per trace entry (maxcut-mqlib {instance}): {check_ms:.3f} ms (median of {reps}); "
        f"parsing the instance {parse_ms:.1f} ms; ratio check/parse {check_ms / parse_ms:.3f}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--certificates", type=int, default=2000)
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--instance", default="G1")
    ap.add_argument("--pairs", type=int, default=5, help="alternating plain/anytime runs of section 1")
    ap.add_argument("--calibration-only", action="store_true", help="section 2 alone")
    args = ap.parse_args()
    if not args.calibration_only:
        trace_overhead(args.certificates, args.instance, args.pairs)
    calibration_spread(args.repeats)
    if not args.calibration_only:
        checker_cost(args.instance)


if __name__ == "__main__":
    main()
