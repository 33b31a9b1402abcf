"""DRAT proof checking of UNSAT answers: what the check costs against the solve (issue 34, item 5).

    .venv/bin/python benchmarks/drat_proofs.py [--tasks sat-satlib sat-random3] [--limit N]
        [--solver solvers/reference/sat] [--engine auto|native|python] [--php 9]

For every bundled instance labelled UNSAT (sat-satlib's SATLIB files; sat-random3's generated
ones, written to a temporary folder from their recorded seeds and checked against their sha256),
the solver (default: the reference solver, python-sat's CaDiCaL with its proof) runs through
`run_instance` under `local` with the task's limits, exactly as in an evaluation; the record gives
the solver's own wall seconds (`wall_s`) and the DRAT check's (`extra.unsat_proof.check_s`: the
checker program's own limited run, its start-up included). Prints one row per instance (status,
proof steps and bytes, solve s, check s, check/solve) and per task the median and largest ratio,
how many proofs verified and how many UNSAT answers the task's `unsat_proof: required` refused
(a changed reference outcome would show up there). `--php N` adds the pigeonhole formula PHP(N)
(N=9: about 10^5 proof lines) solved by Debian's cadical: text and binary proofs, check time
against cadical's own. No wall-clock assertion: seconds and ratios on this machine.
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import statistics
import subprocess
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from tcsexam.problems import get_problem
from tcsexam.problems.generate import generate_text
from tcsexam.runner.sandboxes import get_sandbox
from tcsexam.runner.solver.candidate import load_candidate
from tcsexam.runner.solver.drat import ProofLimits, check_proof
from tcsexam.runner.solver.execute import run_instance
from tcsexam.tasks import load_task

ROOT = Path(__file__).resolve().parents[1]


def unsat_instances(task, folder: Path, limit: int | None):
    """The task's instances labelled UNSAT, generated ones written into `folder` (sha256 checked)."""
    chosen = [inst for inst in task.instances if str(inst.meta.get("label", "")).upper() == "UNSAT"]
    chosen = chosen[:limit] if limit else chosen
    out = []
    for inst in chosen:
        if inst.generate is not None and not inst.path.is_file():
            g = inst.generate
            text = generate_text(task.problem_impl, g["size"], g["seed"], g["index"], g["format"])
            path = folder / inst.path.name
            path.write_text(text)
            assert hashlib.sha256(path.read_bytes()).hexdigest() == inst.sha256, inst.name
            inst = replace(inst, path=path)
        out.append(inst)
    return out


def bench_task(task_id: str, solver: Path, limit: int | None, work: Path) -> None:
    task = load_task(task_id)
    cand = load_candidate(solver, task.id)
    box = get_sandbox("local")
    gen = work / f"gen-{task_id}"
    gen.mkdir()
    instances = unsat_instances(task, gen, limit)
    print(f"\n{task_id}: {len(instances)} instance(s) labelled UNSAT, solver {solver}, unsat_proof {task.unsat_proof}")
    print(f"{'instance':<28} {'status':<19} {'steps':>8} {'bytes':>10} {'solve s':>8} {'check s':>8} {'ratio':>7}")
    ratios, verified, refused, other = [], 0, [], []
    for inst in instances:
        scratch = Path(tempfile.mkdtemp(prefix="tcsexam-drat-bench-", dir=work))
        scratch.chmod(0o755)
        task_one = replace(task, instances=(inst,))
        rec = run_instance(
            task_one, inst, cand, sandbox=box, limits=task.limits.for_threads(cand.threads), seed=1, scratch_dir=scratch
        )
        shutil.rmtree(scratch, ignore_errors=True)
        proof = rec.extra.get("unsat_proof") or {}
        check_s, solve_s = proof.get("check_s"), rec.wall_s
        ratio = check_s / solve_s if check_s is not None and solve_s else None
        if proof.get("verified"):
            verified += 1
            ratios.append(ratio)
        elif rec.claimed == "UNSAT":
            refused.append((inst.name, rec.message))
        else:
            other.append((inst.name, rec.status, rec.claimed))
        print(
            f"{inst.name:<28} {str(rec.status):<19} {proof.get('steps', '-'):>8} {proof.get('bytes', '-'):>10} "
            f"{solve_s or 0:>8.3f} {check_s if check_s is not None else float('nan'):>8.3f} "
            f"{ratio if ratio is not None else float('nan'):>7.2f}"
        )
    if ratios:
        print(f"{task_id}: check/solve median {statistics.median(ratios):.2f}, max {max(ratios):.2f}; ", end="")
    print(f"{verified} proof(s) verified, {len(refused)} UNSAT answer(s) refused, {len(other)} not answered UNSAT")
    for name, message in refused:
        print(f"  refused {name}: {message}")
    for name, status, claimed in other:
        print(f"  {name}: {status}, claimed {claimed}")


def pigeonhole(n: int) -> str:
    holes = n - 1
    var = [[p * holes + k + 1 for k in range(holes)] for p in range(n)]
    clauses = [row[:] for row in var]
    for k in range(holes):
        clauses += [[-var[p][k], -var[q][k]] for p in range(n) for q in range(p + 1, n)]
    return f"p cnf {n * holes} {len(clauses)}\n" + "".join(" ".join(map(str, c)) + " 0\n" for c in clauses)


def bench_php(n: int, engine: str, work: Path) -> None:
    if shutil.which("cadical") is None:
        print("\n--php: Debian's cadical is not installed")
        return
    cnf = work / f"php{n}.cnf"
    cnf.write_text(pigeonhole(n))
    inst = get_problem("sat").parse_instance(cnf)
    print(f"\nPHP({n}) by Debian's cadical, engine {engine}")
    for binary in (False, True):
        proof = work / f"php{n}.{'bin' if binary else 'txt'}"
        start = time.perf_counter()
        subprocess.run(
            ["cadical", "-q", str(cnf), str(proof)] + ([] if binary else ["--no-binary"]),
            capture_output=True,
            check=False,
        )
        solve_s = time.perf_counter() - start
        lines = proof.read_bytes().count(b"\n") if not binary else None
        v = check_proof(
            inst, proof, limits=ProofLimits(wall_s=600, mem_mb=8192, proof_mb=2048), scratch=work, engine=engine
        )
        what = f"{lines} lines" if lines is not None else "binary"
        print(
            f"  {what:>12}, {v.steps} steps, {proof.stat().st_size} bytes: solve {solve_s:.2f} s, check "
            f"{v.check_s:.2f} s (ratio {v.check_s / solve_s:.1f}), verified {v.verified}: {v.reason}"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", nargs="*", default=["sat-satlib", "sat-random3"])
    ap.add_argument("--limit", type=int, default=None, help="at most this many UNSAT instances per task")
    ap.add_argument("--solver", type=Path, default=ROOT / "solvers" / "reference" / "sat")
    ap.add_argument("--engine", default="auto", choices=["auto", "native", "python"], help="for --php")
    ap.add_argument("--php", type=int, default=0, help="also PHP(N) by Debian's cadical (9: ~10^5 proof lines)")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="tcsexam-drat-bench-", dir="/tmp"))
    work.chmod(0o755)
    try:
        for task_id in args.tasks:
            bench_task(task_id, args.solver, args.limit, work)
        if args.php:
            bench_php(args.php, args.engine, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
