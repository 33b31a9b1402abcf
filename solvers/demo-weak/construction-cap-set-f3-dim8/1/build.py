"""demo-weak: a cap set in F_3^8 by one random greedy pass (a vector is kept when it closes no
line with two kept ones). Usage: build.py SOLUTION SEED
"""

import itertools
import os
import sys

import numpy as np


def main():
    out, seed = sys.argv[1], int(sys.argv[2])
    rng = np.random.default_rng(seed)
    points = list(itertools.product(range(3), repeat=8))
    kept, blocked = [], set()
    for i in rng.permutation(len(points)).tolist():
        v = points[i]
        if v in blocked:
            continue
        for w in kept:
            blocked.add(tuple((-a - b) % 3 for a, b in zip(v, w)))
        kept.append(v)
    tmp = out + ".tmp"
    with open(tmp, "w") as f:
        f.writelines(" ".join(map(str, v)) + "\n" for v in kept)
    os.replace(tmp, out)


if __name__ == "__main__":
    main()
