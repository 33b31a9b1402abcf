"""demo-strong: a large Sidon set in [1, 500] from Bose-Chowla sets.

For a prime q and a primitive element t of GF(q^2) = GF(q)[x] / (x^2 - c x - d), the q exponents
a in [1, q^2 - 1) with t^a - t in GF(q) form a Sidon set modulo q^2 - 1. For every multiplier
coprime to the modulus and every rotation, the residues falling in a window of 500 consecutive
integers are a Sidon set; the largest such window over q = 19 ... 31 is written.
Usage: build.py SOLUTION TIME_LIMIT SEED
"""

import math
import os
import sys

LOW, HIGH = 1, 500


def bose(q):
    n = q * q - 1
    for c in range(q):
        for d in range(1, q):
            # powers of x: (u, v) = u + v x, with x^2 = c x + d
            u, v, exps = 1, 0, []
            for a in range(1, n + 1):
                u, v = (v * d) % q, (u + v * c) % q
                if (u, v) == (1, 0):
                    break
                if v == 1:
                    exps.append(a)
            if a == n and (u, v) == (1, 0) and len(exps) == q:
                return exps, n
    raise RuntimeError(f"no primitive quadratic over GF({q})")


def widest(residues, n, width):
    best = []
    for m in range(1, n):
        if math.gcd(m, n) != 1:
            continue
        r = sorted(x * m % n for x in residues)
        r2 = r + [x + n for x in r]
        j = 0
        for i in range(len(r)):
            j = max(j, i)
            while j + 1 < len(r2) and j + 1 < i + len(r) and r2[j + 1] - r2[i] < width:
                j += 1
            if j - i + 1 > len(best):
                best = [x - r2[i] for x in r2[i : j + 1]]
    return best


def main():
    out = sys.argv[1]
    best = []
    for q in (19, 23, 29, 31):
        exps, n = bose(q)
        found = widest(exps, n, HIGH - LOW + 1)
        if len(found) > len(best):
            best = found
    tmp = out + ".tmp"
    with open(tmp, "w") as f:
        f.write(f"# Sidon set of {len(best)} integers in [{LOW}, {HIGH}] (Bose-Chowla)\n")
        f.write(" ".join(str(x + LOW) for x in best) + "\n")
    os.replace(tmp, out)


if __name__ == "__main__":
    main()
