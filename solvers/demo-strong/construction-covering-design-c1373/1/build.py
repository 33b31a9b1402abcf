"""demo-strong: a (13, 7, 3) covering design by local search.

Start from a greedy covering, then repeatedly drop a block and repair: simulated annealing over
b blocks minimising the number of uncovered triples (a move replaces one point of one block),
with b lowered each time a full covering is found; a fixed, seeded budget (ATTEMPTS runs of
ITERATIONS moves per b), so a rerun finds the same design. Writes every improvement atomically.
Usage: build.py SOLUTION TIME_LIMIT SEED
"""

import itertools
import os
import sys
import time

import numpy as np

V, K, T = 13, 7, 3
ITERATIONS, ATTEMPTS = 15_000, 2


def write(path, blocks):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(f"# ({V},{K},{T}) covering design, {len(blocks)} blocks\n")
        for b in blocks:
            f.write(" ".join(str(p + 1) for p in sorted(b)) + "\n")
    os.replace(tmp, path)


def main():
    out, limit, seed = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
    deadline = time.monotonic() + 0.6 * limit
    rng = np.random.default_rng(seed)
    triples = list(itertools.combinations(range(V), T))
    tmask = np.array([sum(1 << p for p in t) for t in triples], dtype=np.int64)

    def uncovered(masks):
        return int((~((tmask[:, None] & masks[None, :]) == tmask[:, None]).any(axis=1)).sum())

    def annealed(b):
        blocks = [set(rng.choice(V, K, replace=False).tolist()) for _ in range(b)]
        masks = np.array([sum(1 << p for p in s) for s in blocks], dtype=np.int64)
        cost, temp = uncovered(masks), 1.0
        for _ in range(ITERATIONS):
            if not cost or time.monotonic() > deadline:
                break
            i = int(rng.integers(b))
            out_p = int(rng.choice(sorted(blocks[i])))
            in_p = int(rng.choice(sorted(set(range(V)) - blocks[i])))
            old = masks[i]
            masks[i] = old ^ (1 << out_p) ^ (1 << in_p)
            new = uncovered(masks)
            if new <= cost or rng.random() < np.exp((cost - new) / temp):
                cost = new
                blocks[i] = (blocks[i] - {out_p}) | {in_p}
            else:
                masks[i] = old
            temp = max(0.05, temp * 0.9995)
        return blocks if cost == 0 else None

    # greedy start: always a covering
    unc = np.ones(len(triples), dtype=bool)
    cands = list(itertools.combinations(range(V), K))
    cmask = np.array([sum(1 << p for p in c) for c in cands], dtype=np.int64)
    cover = (tmask[:, None] & cmask[None, :]) == tmask[:, None]
    best = []
    while unc.any():
        j = int(np.argmax((cover & unc[:, None]).sum(axis=0)))
        best.append(set(cands[j]))
        unc &= ~cover[:, j]
    write(out, best)
    b = len(best) - 1
    while b > 0:
        found = next((f for f in (annealed(b) for _ in range(ATTEMPTS)) if f is not None), None)
        if found is None:
            break
        best = found
        write(out, best)
        b -= 1


if __name__ == "__main__":
    main()
