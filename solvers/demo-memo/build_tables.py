"""Build demo-memo's embedded answer tables (run once; the tables are committed).

    .venv/bin/python solvers/demo-memo/build_tables.py [--budget SECONDS]

For every instance of the Lite Solver tasks it runs the reference solver (solvers/reference/<problem>)
with a generous budget and stores the certificate (and an UNSAT answer's DRAT proof) under the key the demo computes from the
instance's content (never its file name), in solvers/demo-memo/<task>/1/answers.py. demo-memo is a
deliberately memorising candidate (docs/twins.md): it exists to show that twins and the scan catch
it. This script is not part of the candidate (it lies outside the attempt folders).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
TASKS = {
    "maxcut-mqlib": "maxcut",
    "tsp-tsplib": "tsp",
    "coloring-dimacs": "coloring",
    "sat-satlib": "sat",
    "maxsat-wcnf": "maxsat",
}


def _solve_module(task: str):
    spec = importlib.util.spec_from_file_location(f"memo_{task}", HERE / task / "1" / "solve.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--budget", type=float, default=12.0, help="time limit passed to the reference solver")
    ap.add_argument("--tasks", nargs="*", default=list(TASKS))
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT / "src"))
    from tcsexam.tasks import load_task

    for task in args.tasks:
        mod = _solve_module(task)
        table, proofs = {}, {}
        for inst in load_task(task).instances:
            data = inst.path.read_bytes()
            key = mod.instance_key(data)
            with tempfile.TemporaryDirectory() as tmp:
                sol, proof = Path(tmp) / "sol", Path(tmp) / "proof"
                solver = ROOT / "solvers" / "reference" / TASKS[task] / "solve.py"
                subprocess.run(
                    [sys.executable, str(solver), str(inst.path), str(sol), str(args.budget), "1"],
                    check=True, cwd=solver.parent, timeout=args.budget * 3 + 30,
                    env={**os.environ, "TCSEXAM_PROOF": str(proof)},
                )  # fmt: skip
                table[key] = mod.pack(sol.read_text())
                if proof.exists():  # an UNSAT answer counts only with its DRAT proof: memorise that too
                    proofs[key] = proof.read_text()
            print(task, inst.name, key, flush=True)
        lines = [
            f"# demo-memo's answers for {task}: the reference solver's certificates, keyed on the instance's",
            "# content (solve.instance_key). Written by solvers/demo-memo/build_tables.py.",
            "ANSWERS = {",
        ]
        lines += [f"    {json.dumps(k)}: {json.dumps(v)}," for k, v in table.items()]
        lines.append("}")
        if proofs:
            lines += ["# the reference solver's DRAT proofs of the UNSAT instances, under the same keys", "PROOFS = {"]
            lines += [f"    {json.dumps(k)}: {json.dumps(v)}," for k, v in proofs.items()]
            lines.append("}")
        (HERE / task / "1" / "answers.py").write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
