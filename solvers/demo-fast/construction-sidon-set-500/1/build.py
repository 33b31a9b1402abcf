"""demo-fast: a Sidon set in [1, 500] by randomised greedy.

Candidates 1..500 are visited in a seeded random order (small numbers first, with noise) and kept
when every pairwise sum stays distinct; the best of a fixed number of passes is written.
Usage: build.py SOLUTION SEED
"""

import os
import sys

import numpy as np


def main():
    out, seed = sys.argv[1], int(sys.argv[2])
    rng = np.random.default_rng(seed)
    best = []
    for _ in range(100):
        order = np.argsort(np.arange(1, 501) + rng.normal(0, 60, 500)) + 1
        chosen, sums = [], set()
        for x in order.tolist():
            new = {x + y for y in chosen} | {2 * x}
            if len(new) == len(chosen) + 1 and not new & sums:
                chosen.append(x)
                sums |= new
        if len(chosen) > len(best):
            best = chosen
    tmp = out + ".tmp"
    with open(tmp, "w") as f:
        f.write(f"# {len(best)} integers\n" + " ".join(map(str, sorted(best))) + "\n")
    os.replace(tmp, out)


if __name__ == "__main__":
    main()
