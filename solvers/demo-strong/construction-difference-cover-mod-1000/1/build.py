"""demo-strong: a small difference cover of Z_1000 from a Wichmann ruler, then local search.

A Wichmann ruler W(r, s) (gaps 1^r, r+1, (2r+1)^r, (4r+3)^s, (2r+2)^(r+1), 1^r) has 4r + s + 3
marks and measures every length up to its own; one of length >= 500 covers Z_1000 (every residue
is d or -d for some d <= 500). The fewest-mark such ruler over r, s is taken, then simulated
annealing tries to remove one more mark (a move shifts one residue; ATTEMPTS seeded runs of
ITERATIONS moves). Usage: build.py SOLUTION TIME_LIMIT SEED
"""

import os
import sys
import time

import numpy as np

M = 1000
ITERATIONS, ATTEMPTS = 50_000, 2


def wichmann(r, s):
    gaps = [1] * r + [r + 1] + [2 * r + 1] * r + [4 * r + 3] * s + [2 * r + 2] * (r + 1) + [1] * r
    return np.concatenate([[0], np.cumsum(gaps)])


def missing(xs):
    cov = np.zeros(M, dtype=bool)
    cov[(xs[:, None] - xs[None, :]) % M] = True
    return int(M - cov.sum())


def anneal(xs, rng, deadline):
    xs, temp = xs.copy(), 0.6
    cost = missing(xs)
    for _ in range(ITERATIONS):
        if not cost or time.monotonic() > deadline:
            break
        i = int(rng.integers(len(xs)))
        old = xs[i]
        new_value = (old + int(rng.integers(-20, 21))) % M if rng.random() < 0.7 else int(rng.integers(M))
        if new_value in xs:
            continue
        xs[i] = new_value
        new = missing(xs)
        if new <= cost or rng.random() < np.exp((cost - new) / temp):
            cost = new
        else:
            xs[i] = old
    return xs if cost == 0 else None


def write(path, xs):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(f"# difference cover of Z_{M}: {len(xs)} residues\n")
        f.write(" ".join(str(int(x)) for x in sorted(xs)) + "\n")
    os.replace(tmp, path)


def main():
    out, limit, seed = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
    deadline = time.monotonic() + 0.6 * limit
    rng = np.random.default_rng(seed)
    rulers = [wichmann(r, s) for r in range(1, 12) for s in range(60)]
    best = min((w for w in rulers if M // 2 <= w[-1] < M), key=len)
    write(out, best)
    for _ in range(ATTEMPTS):
        found = anneal(np.delete(best, int(rng.integers(len(best)))), rng, deadline)
        if found is None:
            continue
        best = found
        write(out, best)


if __name__ == "__main__":
    main()
