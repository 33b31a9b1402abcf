"""demo-strong: a cap set in F_3^8 as a product of two 20-caps of AG(4, 3).

A 20-cap of AG(4, 3) (the largest possible) is found by randomised greedy with restarts and
one-swap local search; the product C x C of two caps is a cap (three points on a line of the
product project to a line or to one point in each factor), giving 400 vectors.
Usage: build.py SOLUTION TIME_LIMIT SEED
"""

import itertools
import os
import sys
import time

import numpy as np

POINTS = np.array(list(itertools.product(range(3), repeat=4)), dtype=np.int64)
WEIGHTS = 3 ** np.arange(3, -1, -1)  # the index of a point in POINTS (product order)


def third(i, j):
    """The index of the third point on the line through points i and j."""
    return int(((-(POINTS[i] + POINTS[j])) % 3) @ WEIGHTS)


THIRD = np.array([[third(i, j) for j in range(81)] for i in range(81)])


def greedy(rng):
    cap, blocked = [], np.zeros(81, dtype=bool)
    for p in rng.permutation(81):
        if blocked[p]:
            continue
        for q in cap:
            blocked[THIRD[p, q]] = True
        cap.append(int(p))
        blocked[p] = True
    return cap


def is_cap(cap):
    s = set(cap)
    return all(THIRD[a, b] not in s for a, b in itertools.combinations(cap, 2))


def improve(cap, rng, deadline):
    """Swap a point out and try to add two: random restarts of greedy completion."""
    best = list(cap)
    for _ in range(20_000):
        if len(best) == 20 or time.monotonic() > deadline:
            break
        keep = [p for p in best if rng.random() > 0.25]
        s = set(keep)
        for p in rng.permutation(81):
            p = int(p)
            if p not in s and all(THIRD[p, q] not in s for q in s):
                s.add(p)
        if len(s) > len(best) and is_cap(list(s)):
            best = sorted(s)
    return best


def main():
    out, limit, seed = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
    deadline = time.monotonic() + 0.6 * limit
    rng = np.random.default_rng(seed)
    cap = max((greedy(rng) for _ in range(200)), key=len)
    cap = improve(cap, rng, deadline)
    vecs = [np.concatenate([POINTS[a], POINTS[b]]) for a in cap for b in cap]
    tmp = out + ".tmp"
    with open(tmp, "w") as f:
        f.write(f"# product of two {len(cap)}-caps of AG(4,3): {len(vecs)} vectors\n")
        for v in vecs:
            f.write(" ".join(map(str, v.tolist())) + "\n")
    os.replace(tmp, out)


if __name__ == "__main__":
    main()
