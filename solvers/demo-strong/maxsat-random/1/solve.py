"""demo-strong MaxSAT candidate: python-sat's RC2 (exact) in a thread, a WalkSAT-style fallback.

usage: python3 solve.py INSTANCE SOLUTION TIME_LIMIT SEED
Reads WCNF in both forms (`p wcnf n m top` + weighted clauses, or `h`/weight lines). Writes the
best assignment found as MaxSAT Evaluation output (`o <cost>`, `v <0/1 string>`) and exits at 85% of
the limit even if RC2 is still searching.
"""

import os
import random
import sys
import threading
import time

START = time.monotonic()
#: share of the time limit spent searching (the rest covers start-up, output and a loaded machine)
BUDGET = 0.85


def read_wcnf(path):
    hard, soft, top, nvars = [], [], None, 0
    with open(path) as fh:
        for line in fh:
            parts = line.split()
            if not parts or parts[0] == "c":
                continue
            if parts[0] == "p":
                nvars = int(parts[2])
                top = int(parts[4]) if len(parts) > 4 else None
                continue
            if parts[0] == "h":
                lits = [int(x) for x in parts[1:] if x != "0"]
                hard.append(lits)
            else:
                w = int(parts[0])
                lits = [int(x) for x in parts[1:] if x != "0"]
                (hard.append(lits) if top is not None and w >= top else soft.append((w, lits)))
            for lit in lits:
                nvars = max(nvars, abs(lit))
    return nvars, hard, soft


def cost_of(assign, hard, soft):
    sat = lambda cl: any((lit > 0) == assign[abs(lit)] for lit in cl)  # noqa: E731
    if not all(sat(cl) for cl in hard):
        return None
    return sum(w for w, cl in soft if not sat(cl))


def write(path, assign, nvars, cost):
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w") as fh:
        fh.write(f"o {cost}\n")
        fh.write("v " + "".join("1" if assign[i] else "0" for i in range(1, nvars + 1)) + "\n")
    os.replace(tmp, path)


def main():
    instance, solution = sys.argv[1], sys.argv[2]
    limit = float(sys.argv[3]) if len(sys.argv) > 3 else 10.0
    rng = random.Random(int(sys.argv[4]) if len(sys.argv) > 4 else 0)
    deadline = START + BUDGET * limit
    nvars, hard, soft = read_wcnf(instance)
    best = {"cost": None, "assign": None}
    lock = threading.Lock()

    def offer(assign):
        cost = cost_of(assign, hard, soft)
        with lock:
            if cost is not None and (best["cost"] is None or cost < best["cost"]):
                best["cost"], best["assign"] = cost, list(assign)
                write(solution, assign, nvars, cost)

    def exact():
        from pysat.examples.rc2 import RC2
        from pysat.formula import WCNF

        wcnf = WCNF()
        for cl in hard:
            wcnf.append(cl)
        for w, cl in soft:
            wcnf.append(cl, weight=w)
        with RC2(wcnf) as rc2:
            model = rc2.compute()
        if model is not None:
            assign = [False] * (nvars + 1)
            for lit in model:
                if abs(lit) <= nvars:
                    assign[abs(lit)] = lit > 0
            offer(assign)
            done.set()

    done = threading.Event()
    threading.Thread(target=exact, daemon=True).start()
    # fallback: a satisfying assignment of the hard clauses by a short random walk
    assign = [False] + [rng.random() < 0.5 for _ in range(nvars)]
    for _ in range(20000):
        if done.is_set() or time.monotonic() > deadline:
            break
        unsat = [cl for cl in hard if not any((lit > 0) == assign[abs(lit)] for lit in cl)]
        if not unsat:
            offer(assign)
            break
        lit = rng.choice(rng.choice(unsat))
        assign[abs(lit)] = not assign[abs(lit)]
    done.wait(max(0.0, deadline - time.monotonic()))
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
