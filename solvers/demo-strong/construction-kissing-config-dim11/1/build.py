"""demo-strong: a kissing configuration in dimension 11 from the root system D11.

The 220 vectors with two non-zero coordinates, each +-1, all have |x|^2 = 2 and any two differ by
|x - y|^2 >= 2: the minimal vectors of the lattice D11 (kissing number 2 n (n - 1)). A greedy pass
then tries integer points of the scaled-up shell to add (none fits beside D11's 220).
Usage: build.py SOLUTION TIME_LIMIT SEED
"""

import itertools
import os
import sys

import numpy as np

DIM = 11


def d_roots(n):
    pts = []
    for i, j in itertools.combinations(range(n), 2):
        for a, b in itertools.product((1, -1), repeat=2):
            p = [0] * n
            p[i], p[j] = a, b
            pts.append(p)
    return np.array(pts, dtype=np.int64)


def greedy_add(pts, candidates):
    """Add each candidate keeping min |x - y|^2 >= max |z|^2 (exact integers)."""
    m = int((pts * pts).sum(axis=1).max())
    for c in candidates:
        if int(c @ c) > m:
            continue
        if int(((pts - c) ** 2).sum(axis=1).min()) >= m:
            pts = np.vstack([pts, c])
    return pts


def main():
    out = sys.argv[1]
    pts = d_roots(DIM)
    extra = np.array([p for p in itertools.product((-1, 0, 1), repeat=DIM) if 0 < sum(map(abs, p)) <= 2])
    pts = greedy_add(pts, extra)
    tmp = out + ".tmp"
    with open(tmp, "w") as f:
        f.write(f"# {len(pts)} points in Z^{DIM}: the roots of D{DIM}\n")
        for p in pts:
            f.write(" ".join(map(str, p.tolist())) + "\n")
    os.replace(tmp, out)


if __name__ == "__main__":
    main()
