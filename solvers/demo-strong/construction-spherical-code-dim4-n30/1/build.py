"""demo-strong: 30 points on the sphere S^3 with a large smallest angle.

Projected gradient ascent on a soft minimum of the pairwise distances (log-sum-exp of the
cosines, sharpened over time) from STARTS seeded random starts; the best configuration is written
(atomically) after every start. Usage: build.py SOLUTION TIME_LIMIT SEED
"""

import os
import sys
import time

import numpy as np

N, D = 30, 4
STARTS = 4


def min_angle(x):
    g = x @ x.T
    np.fill_diagonal(g, -1.0)
    return float(np.degrees(np.arccos(np.clip(g.max(), -1, 1))))


def optimise(rng, steps):
    x = rng.normal(size=(N, D))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    iu = np.triu_indices(N, 1)
    for step in range(steps):
        beta = 10.0 + 990.0 * step / steps
        g = x @ x.T
        c = g[iu]
        w = np.exp(beta * (c - c.max()))
        w /= w.sum()
        grad = np.zeros_like(x)
        np.add.at(grad, iu[0], w[:, None] * x[iu[1]])
        np.add.at(grad, iu[1], w[:, None] * x[iu[0]])
        x -= (0.05 / (1 + step / 200)) * grad / (np.linalg.norm(grad) + 1e-12)
        x /= np.linalg.norm(x, axis=1, keepdims=True)
    return x


def write(path, x):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(f"# {N} points on S^{D - 1}, smallest angle {min_angle(x):.6f} degrees\n")
        for row in x:
            f.write(" ".join(repr(float(v)) for v in row) + "\n")
    os.replace(tmp, path)


def main():
    out, limit, seed = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
    deadline = time.monotonic() + 0.6 * limit
    rng = np.random.default_rng(seed)
    best, best_angle = None, -1.0
    for _ in range(STARTS):
        if best is not None and time.monotonic() > deadline:
            break
        x = optimise(rng, 3000)
        a = min_angle(x)
        if a > best_angle:
            best, best_angle = x, a
            write(out, best)


if __name__ == "__main__":
    main()
