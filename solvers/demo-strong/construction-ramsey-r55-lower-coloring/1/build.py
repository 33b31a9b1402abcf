"""demo-strong: a 2-colouring of K_n without a monochromatic K5, as large as it gets.

Start from the Paley colouring of K_37 (edge ij coloured 1 iff i - j is a square mod 37; its
clique number is 4, so neither colour has a K5). Then add vertices one at a time: a new vertex's
edge colours c must leave no colour-k K4 inside {u : c_u = k}; the number of such K4s is
driven to 0 by a tabu search over single flips (a fixed, seeded budget of STEPS flips per vertex).
Every success is written atomically.
Usage: build.py SOLUTION TIME_LIMIT SEED
"""

import itertools
import os
import sys
import time

import numpy as np

Q = 37
STEPS = 300


def paley(q):
    squares = {x * x % q for x in range(1, q)}
    return np.array([[int(i != j and (i - j) % q in squares) for j in range(q)] for i in range(q)], dtype=np.int8)


def k4s(m, colour):
    n = len(m)
    adj = (m == colour) & ~np.eye(n, dtype=bool)
    out = []
    for a, b in itertools.combinations(range(n), 2):
        if not adj[a, b]:
            continue
        common = [c for c in range(b + 1, n) if adj[a, c] and adj[b, c]]
        for c, d in itertools.combinations(common, 2):
            if adj[c, d]:
                out.append((a, b, c, d))
    return np.array(out, dtype=np.int64).reshape(-1, 4)


def extend(m, rng, deadline):
    """Colours of a new vertex's edges with no monochromatic K5, or None."""
    n = len(m)
    quads = [k4s(m, 0), k4s(m, 1)]
    c = rng.integers(0, 2, n)
    tabu = np.zeros(n, dtype=np.int64)
    step = 0

    def cost(c):
        return sum(int((c[q] == k).all(axis=1).sum()) for k, q in enumerate(quads))

    current = cost(c)
    while current and step < STEPS and time.monotonic() < deadline:
        step += 1
        best_u, best_cost = None, None
        for u in range(n):
            if tabu[u] > step:
                continue
            c[u] ^= 1
            x = cost(c)
            c[u] ^= 1
            if best_cost is None or x < best_cost:
                best_u, best_cost = u, x
        if best_u is None:
            continue
        c[best_u] ^= 1
        current = best_cost
        tabu[best_u] = step + 3 + int(rng.integers(0, 4))
    return c if current == 0 else None


def write(path, m):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(f"{len(m)}\n")
        for row in m:
            f.write("".join(map(str, row.tolist())) + "\n")
    os.replace(tmp, path)


def main():
    out, limit, seed = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
    deadline = time.monotonic() + 0.6 * limit
    rng = np.random.default_rng(seed)
    m = paley(Q)
    write(out, m)
    while time.monotonic() < deadline:
        c = extend(m, rng, deadline)
        if c is None:
            break
        n = len(m)
        grown = np.zeros((n + 1, n + 1), dtype=np.int8)
        grown[:n, :n] = m
        grown[n, :n] = grown[:n, n] = c
        m = grown
        write(out, m)


if __name__ == "__main__":
    main()
