"""demo-weak SAT candidate: a short pure-Python WalkSAT; `s UNKNOWN` when it gives up.

Never proves UNSAT; solves only the easy satisfiable instances within its flip budget.
"""

import random
import sys

instance, solution = sys.argv[1], sys.argv[2]
rng = random.Random(int(sys.argv[4]) if len(sys.argv) > 4 else 0)
clauses, cur, nvars = [], [], 0
with open(instance) as fh:
    for line in fh:
        s = line.strip()
        if not s or s[0] in "cp":
            continue
        if s[0] == "%":
            break
        for tok in s.split():
            lit = int(tok)
            if lit == 0:
                clauses.append(cur)
                cur = []
            else:
                cur.append(lit)
                nvars = max(nvars, abs(lit))
assign = [False] + [rng.random() < 0.5 for _ in range(nvars)]
answer = "s UNKNOWN\n"
for _ in range(3000):
    unsat = [cl for cl in clauses if not any((l > 0) == assign[abs(l)] for l in cl)]
    if not unsat:
        lits = [str(v if assign[v] else -v) for v in range(1, nvars + 1)]
        answer = "s SATISFIABLE\nv " + " ".join(lits) + " 0\n"
        break
    cl = rng.choice(unsat)
    lit = rng.choice(cl) if rng.random() < 0.5 else cl[0]
    assign[abs(lit)] = not assign[abs(lit)]
with open(solution, "w") as fh:
    fh.write(answer)
