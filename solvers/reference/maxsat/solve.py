"""Reference MaxSAT solver: python-sat's stratified RC2 (core-guided, exact) in a child process,
with a fallback answer written first (a model of the hard clauses from CaDiCaL), so SOLUTION
always holds the best answer known when half of the time limit is reached.

usage: python3 solve.py INSTANCE SOLUTION TIME_LIMIT SEED
Reads WCNF in the old (`p wcnf n m top`) or new (`h` lines) form, writes MaxSAT Evaluation output
(`s OPTIMUM FOUND` or `s SATISFIABLE`, `o <cost>`, `v <0/1 string>`) atomically. The seed shuffles
the soft clauses given to RC2. An independent program: numpy and python-sat only.
"""

import multiprocessing as mp
import os
import sys
import time

import numpy as np
from pysat.examples.rc2 import RC2Stratified
from pysat.formula import WCNF
from pysat.solvers import Cadical195

START = time.monotonic()


def read_wcnf(path):
    hard, soft, weights = [], [], []
    nvars, top, _new_form = 0, None, True
    with open(path, "rb") as fh:
        for line in fh:
            parts = line.split()
            if not parts or parts[0] == b"c":
                continue
            if parts[0] == b"p":
                nvars = int(parts[2])
                top = int(parts[4]) if len(parts) > 4 else None
                continue
            lits = [int(x) for x in parts[1:-1]]
            if parts[0] == b"h":
                hard.append(lits)
            elif top is not None and int(parts[0]) >= top:
                hard.append(lits)
            else:
                soft.append(lits)
                weights.append(int(parts[0]))
            nvars = max([nvars] + [abs(x) for x in lits])
    return nvars, hard, soft, weights


def cost_of(model_value, soft, weights):
    return sum(w for cl, w in zip(soft, weights) if not any(model_value[abs(x)] == (x > 0) for x in cl))


def write(path, nvars, value, cost, optimum):
    tmp = f"{path}.tmp{os.getpid()}"
    bits = "".join("1" if value[i] else "0" for i in range(1, nvars + 1))
    status = "OPTIMUM FOUND" if optimum else "SATISFIABLE"
    with open(tmp, "w") as fh:
        fh.write(f"s {status}\no {cost}\nv {bits}\n")
    os.replace(tmp, path)


def rc2_child(hard, soft, weights, order, conn):
    wcnf = WCNF()
    for cl in hard:
        wcnf.append(cl)
    for i in order:
        wcnf.append(soft[i], weight=weights[i])
    with RC2Stratified(wcnf) as rc2:
        model = rc2.compute()
        conn.send(None if model is None else (model, rc2.cost))


def main():
    instance, solution = sys.argv[1], sys.argv[2]
    limit = float(sys.argv[3]) if len(sys.argv) > 3 else 10.0
    seed = int(sys.argv[4]) if len(sys.argv) > 4 else 0
    deadline = START + 0.5 * limit
    rng = np.random.default_rng(seed)
    nvars, hard, soft, weights = read_wcnf(instance)

    with Cadical195(bootstrap_with=hard) as sat:
        if not sat.solve():
            with open(solution, "w") as fh:
                fh.write("s UNSATISFIABLE\n")
            return
        model = sat.get_model() or []
    value = np.zeros(nvars + 1, dtype=bool)
    for lit in model:
        if abs(lit) <= nvars:
            value[abs(lit)] = lit > 0
    write(solution, nvars, value, cost_of(value, soft, weights), False)

    recv, send = mp.get_context("fork").Pipe(duplex=False)
    child = mp.get_context("fork").Process(
        target=rc2_child, args=(hard, soft, weights, rng.permutation(len(soft)).tolist(), send), daemon=True
    )
    child.start()
    send.close()
    try:
        if recv.poll(max(0.0, deadline - time.monotonic())):
            result = recv.recv()
            if result is not None:
                model, cost = result
                for lit in model:
                    if abs(lit) <= nvars:
                        value[abs(lit)] = lit > 0
                write(solution, nvars, value, cost_of(value, soft, weights), True)
    except EOFError:
        pass  # the child died: keep the fallback answer
    finally:
        if child.is_alive():
            child.kill()
        child.join()


if __name__ == "__main__":
    main()
