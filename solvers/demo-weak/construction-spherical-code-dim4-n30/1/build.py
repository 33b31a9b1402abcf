"""demo-weak: 30 seeded Gaussian random points on S^3 (no optimisation). Usage: build.py SOLUTION SEED"""

import os
import sys

import numpy as np


def main():
    out, seed = sys.argv[1], int(sys.argv[2])
    x = np.random.default_rng(seed).normal(size=(30, 4))
    tmp = out + ".tmp"
    with open(tmp, "w") as f:
        f.writelines(" ".join(f"{v:.12f}" for v in row) + "\n" for row in x)
    os.replace(tmp, out)


if __name__ == "__main__":
    main()
