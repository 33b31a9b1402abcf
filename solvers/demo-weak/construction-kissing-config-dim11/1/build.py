"""demo-weak: the cross-polytope +-e_i of Z^11 plus the all-ones direction (1, ..., 1) scaled to
norm 1 by rounding, which lands too close to e_1: the checker answers certificate_failed.
Usage: build.py SOLUTION
"""

import os
import sys

N = 11


def main():
    out = sys.argv[1]
    points = []
    for i in range(N):
        for s in (1, -1):
            p = [0] * N
            p[i] = s
            points.append(p)
    points.append([1] + [0] * (N - 1))  # the rounded all-ones direction: a repeat of e_1
    tmp = out + ".tmp"
    with open(tmp, "w") as f:
        f.writelines(" ".join(map(str, p)) + "\n" for p in points)
    os.replace(tmp, out)


if __name__ == "__main__":
    main()
