"""Reference SAT solver: python-sat's CaDiCaL 1.9.5, interrupted at half of the time limit.

usage: python3 solve.py INSTANCE SOLUTION TIME_LIMIT SEED
Reads DIMACS CNF (stops at SATLIB's '%' trailer), writes SAT-competition output
(`s SATISFIABLE` + `v ... 0`, `s UNSATISFIABLE`, or `s UNKNOWN` when interrupted) to SOLUTION
atomically; with UNSATISFIABLE, first CaDiCaL's DRAT proof (python-sat's `with_proof`, text DRAT)
to $TCSEXAM_PROOF, the path the harness checks it at. The seed shuffles the clause order. An independent program: numpy and python-sat only.
"""

import os
import sys
import threading
import time

import numpy as np
from pysat.solvers import Cadical195

START = time.monotonic()


def read_cnf(path):
    clauses, current = [], []
    with open(path, "rb") as fh:
        for line in fh:
            s = line.strip()
            if not s or s[:1] in (b"c", b"p"):
                continue
            if s[:1] == b"%":
                break
            for tok in s.split():
                lit = int(tok)
                if lit == 0:
                    clauses.append(current)
                    current = []
                else:
                    current.append(lit)
    if current:
        clauses.append(current)
    return clauses


def write(path, text):
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w") as fh:
        fh.write(text)
    os.replace(tmp, path)


def main():
    instance, solution = sys.argv[1], sys.argv[2]
    limit = float(sys.argv[3]) if len(sys.argv) > 3 else 10.0
    seed = int(sys.argv[4]) if len(sys.argv) > 4 else 0
    clauses = read_cnf(instance)
    order = np.random.default_rng(seed).permutation(len(clauses))
    with Cadical195(bootstrap_with=[clauses[i] for i in order], with_proof=True) as solver:
        remaining = START + 0.5 * limit - time.monotonic()
        timer = threading.Timer(max(0.0, remaining), solver.interrupt)
        timer.start()
        try:
            answer = solver.solve_limited(expect_interrupt=True)
        finally:
            timer.cancel()
        if answer is True:
            model = solver.get_model() or []
            lines = ["s SATISFIABLE"]
            for k in range(0, len(model), 20):
                lines.append("v " + " ".join(map(str, model[k : k + 20])))
            lines.append("v 0")
            write(solution, "\n".join(lines) + "\n")
        elif answer is False:
            proof = solver.get_proof() or []
            write(os.environ.get("TCSEXAM_PROOF", f"{solution}.drat"), "\n".join(proof) + "\n")
            write(solution, "s UNSATISFIABLE\n")
        else:
            write(solution, "s UNKNOWN\n")


if __name__ == "__main__":
    main()
