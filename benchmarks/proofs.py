"""Check time of every bundled proof through `tcsexam proof check` (scan, the statement's and the
proof's compile, the check file, coqchk: each in the sandbox under the limiter) against a bare
`coqc` of the same two files in the same session (no sandbox, no limiter, no check). Prints one
line per proof (status, each step's wall seconds, total, bare, ratio) and the sums; asserts nothing.

usage: .venv/bin/python benchmarks/proofs.py [--model demo-strong] [--suite full] [--sandbox auto]
                                             [--repeat R]

What the ratio shows: the price of judging a proof rather than only compiling it. The check file
re-loads the submission and every library it loaded (Lia, Arith: most of a step's time), coqchk
re-checks the compiled proof, and each step pays the sandbox's start. The UNSAT proofs' DRAT
check is measured by the SAT proof work (docs/proofs.md, "UNSAT answers").
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from tcsexam.proofs import coq
from tcsexam.proofs.check import check_proof
from tcsexam.proofs.task import load_proof_task
from tcsexam.suites import load_suite

ROOT = Path(__file__).resolve().parents[1]


def bare_coqc(task, proof: Path) -> float:
    """Seconds of `coqc` on the statement and then the proof, as a user would compile them."""
    work = Path(tempfile.mkdtemp(prefix="tcsexam-bench-proof-"))
    try:
        shutil.copyfile(task.statement_file, work / f"{coq.TASK_LIB}.v")
        shutil.copyfile(proof, work / f"{coq.SUBMISSION_LIB}.v")
        started = time.perf_counter()
        subprocess.run(
            ["coqc", "-q", "-Q", str(work), coq.TASK_ROOT, str(work / f"{coq.TASK_LIB}.v")],
            check=True,
            capture_output=True,
            cwd=work,
        )
        subprocess.run(
            ["coqc", "-q", "-Q", str(work), coq.TASK_ROOT, str(work / f"{coq.SUBMISSION_LIB}.v")],
            capture_output=True,
            cwd=work,
        )
        return time.perf_counter() - started
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="demo-strong")
    ap.add_argument("--suite", default="full")
    ap.add_argument("--sandbox", default="auto")
    ap.add_argument("--repeat", type=int, default=1, help="runs per proof (the fastest is shown)")
    args = ap.parse_args()
    suite = load_suite(args.suite)
    items = [*suite.tracks["theorem"], *suite.tracks["open_conjecture"]]
    print(f"coqc {coq.coqc_version()}; model {args.model}; suite {args.suite}; sandbox {args.sandbox}")
    print(f"{'item':36} {'status':11} {'steps (wall s)':76} {'check s':>8} {'bare s':>7} {'ratio':>6}")
    total_check = total_bare = 0.0
    for item in items:
        task = load_proof_task(ROOT / "config" / "tasks" / f"{item}.yaml")
        folder = ROOT / "solvers" / args.model / item / "1"
        if not (folder / "proof.v").is_file():
            print(f"{item:36} (no proof.v)")
            continue
        best_check, best_bare, verdict = float("inf"), float("inf"), None
        for _ in range(max(1, args.repeat)):
            started = time.perf_counter()
            verdict = check_proof(task, folder, sandbox=args.sandbox)
            best_check = min(best_check, time.perf_counter() - started)
            best_bare = min(best_bare, bare_coqc(task, folder / "proof.v"))
        steps = " ".join(f"{s['step']}={s['wall_s']:.2f}" for s in verdict["steps"])
        total_check, total_bare = total_check + best_check, total_bare + best_bare
        ratio = best_check / best_bare if best_bare > 0 else float("nan")
        print(f"{item:36} {verdict['status']:11} {steps:76} {best_check:8.2f} {best_bare:7.2f} {ratio:6.2f}")
    ratio = total_check / total_bare if total_bare > 0 else float("nan")
    print(f"{'total':36} {'':11} {'':76} {total_check:8.2f} {total_bare:7.2f} {ratio:6.2f}")


if __name__ == "__main__":
    main()
