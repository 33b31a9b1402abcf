"""demo-fast: 30 points on S^3 by a short repulsion run from the Clifford-torus grid.

Starting from (cos a, sin a, cos b, sin b)/sqrt(2) on a 5 x 6 grid (plus a small seeded jitter),
each point moves along the tangent of the Coulomb force 1/r^2 for a fixed number of steps.
Usage: build.py SOLUTION SEED
"""

import os
import sys

import numpy as np


def main():
    out, seed = sys.argv[1], int(sys.argv[2])
    rng = np.random.default_rng(seed)
    a, b = np.meshgrid(2 * np.pi * np.arange(5) / 5, 2 * np.pi * np.arange(6) / 6, indexing="ij")
    x = np.stack([np.cos(a), np.sin(a), np.cos(b), np.sin(b)], axis=-1).reshape(-1, 4)
    x = x + rng.normal(0, 0.01, x.shape)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    for _ in range(400):
        diff = x[:, None, :] - x[None, :, :]
        r2 = (diff**2).sum(-1) + np.eye(len(x))
        force = (diff / r2[..., None] ** 1.5).sum(axis=1)
        force -= (force * x).sum(axis=1, keepdims=True) * x
        x += 0.01 * force
        x /= np.linalg.norm(x, axis=1, keepdims=True)
    tmp = out + ".tmp"
    with open(tmp, "w") as f:
        f.writelines(" ".join(repr(float(v)) for v in row) + "\n" for row in x)
    os.replace(tmp, out)


if __name__ == "__main__":
    main()
