"""demo-fast: a (13, 7, 3) covering by randomised greedy with restarts.

Each pass repeatedly takes a 7-subset covering the most still-uncovered triples, ties broken at
random; the smallest covering of a fixed number of passes is written. Usage: build.py SOLUTION SEED
"""

import itertools
import os
import sys

import numpy as np


def main():
    out, seed = sys.argv[1], int(sys.argv[2])
    rng = np.random.default_rng(seed)
    blocks = list(itertools.combinations(range(1, 14), 7))
    triples = {t: i for i, t in enumerate(itertools.combinations(range(1, 14), 3))}
    incidence = np.zeros((len(blocks), len(triples)), dtype=bool)
    for b, block in enumerate(blocks):
        incidence[b, [triples[t] for t in itertools.combinations(block, 3)]] = True
    best = None
    for _ in range(40):
        open_ = np.ones(len(triples), dtype=bool)
        chosen = []
        while open_.any():
            gain = incidence[:, open_].sum(axis=1) + rng.random(len(blocks)) * 0.5
            b = int(np.argmax(gain))
            chosen.append(blocks[b])
            open_ &= ~incidence[b]
        if best is None or len(chosen) < len(best):
            best = chosen
    tmp = out + ".tmp"
    with open(tmp, "w") as f:
        f.write(f"# {len(best)} blocks\n")
        f.writelines(" ".join(map(str, b)) + "\n" for b in best)
    os.replace(tmp, out)


if __name__ == "__main__":
    main()
