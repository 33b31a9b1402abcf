"""demo-strong: a 14-mark Golomb ruler from Singer difference sets.

For a prime q, the exponents a (mod q^2 + q + 1) with x^a in span(1, x) inside GF(q^3) form a
Singer perfect difference set of q + 1 residues: every non-zero residue is one difference. Any k
of them read as integers after a rotation are a Golomb ruler. For q = 13, 17, 19 and every
multiplier coprime to the modulus, the best window of 14 consecutive residues is kept.
Usage: build.py SOLUTION TIME_LIMIT SEED
"""

import itertools
import math
import os
import sys

MARKS = 14


def mul(a, b, q, poly):
    """Product of two elements of GF(q)[x] / (x^3 - poly[2] x^2 - poly[1] x - poly[0])."""
    prod = [0] * 5
    for i, j in itertools.product(range(3), range(3)):
        prod[i + j] = (prod[i + j] + a[i] * b[j]) % q
    for k in (4, 3):
        c, prod[k] = prod[k], 0
        for t in range(3):
            prod[k - 3 + t] = (prod[k - 3 + t] + c * poly[t]) % q
    return prod[:3]


def singer(q):
    n = q * q + q + 1
    for poly in itertools.product(range(q), repeat=3):
        if poly[0] == 0:
            continue
        x, power, exps = [0, 1, 0], [1, 0, 0], set()
        order = None
        for a in range(q**3 - 1):
            if power[2] == 0:
                exps.add(a % n)
            power = mul(power, x, q, poly)
            if power == [1, 0, 0]:
                order = a + 1
                break
        if order == q**3 - 1 and len(exps) == q + 1:
            return sorted(exps), n
    raise RuntimeError(f"no primitive cubic over GF({q})")


def best_window(residues, n, k):
    best = None
    for m in range(1, n):
        if math.gcd(m, n) != 1:
            continue
        r = sorted(x * m % n for x in residues)
        r2 = r + [x + n for x in r]
        for s in range(len(r)):
            w = r2[s : s + k]
            if best is None or w[-1] - w[0] < best[-1] - best[0]:
                best = w
    return [x - best[0] for x in best]


def main():
    out = sys.argv[1]
    best = None
    for q in (13, 17, 19):
        residues, n = singer(q)
        ruler = best_window(residues, n, MARKS)
        if best is None or ruler[-1] < best[-1]:
            best = ruler
    tmp = out + ".tmp"
    with open(tmp, "w") as f:
        f.write(f"# {MARKS}-mark Golomb ruler of length {best[-1]} (Singer difference sets)\n")
        f.write(" ".join(map(str, best)) + "\n")
    os.replace(tmp, out)


if __name__ == "__main__":
    main()
