"""Check times of the construction checkers (tcsexam.problems.constructions) on their largest
realistic certificates, against a plain-Python check of the same object (itertools over every
pair / triple / 5-subset, Python integers). Prints times and ratios; asserts nothing.

usage: .venv/bin/python benchmarks/constructions.py [--repeat R]

No valid 42-vertex (5,5)-colouring, 512-cap or 593-point kissing configuration is bundled (they
are the literature's records), so the largest objects are built here to make the checkers do the
work of a valid one (the plain loops scan everything, counting, instead of stopping at the first
violation):
  ramsey    K_42 = Paley P(37) + 5 vertices joined to everything in colour 1: colour 0 is
            K5-free on all 42 vertices, so the checker's scan of it is complete, then colour 1's
            K5 is found; the plain loop visits all 850,668 5-subsets. Also P(37) (valid, every
            5-subset of K_37) and P(41) + 1 vertex (both stop at the first K5)
  cap set   400 vectors of F_3^8 (the product of two 20-caps of AG(4,3), valid) and 512 distinct
            vectors (that cap + 112 more: invalid; the checker's one block of 512 x 512 pairs is
            its whole work, the plain loop counts every line over all pairs)
  kissing   the 220 roots of D11 (valid: every pair), the same scaled by 2^30 (the exact
            Python-integer path on every near-tight pair), and 593 distinct points (D11 + 373
            more: the checker's first block is 512 x 593 of the 593 x 593 pairs; the plain loop
            counts every close pair)
  the others: the largest object of each task (14 marks, 26-element Sidon set, 13-block covering,
            39-residue difference cover, 30-point spherical code)
"""

from __future__ import annotations

import argparse
import itertools
import math

import numpy as np
from checkers import best_of  # benchmarks/checkers.py (this folder is on sys.path when run)

from tcsexam.problems import get_problem
from tcsexam.problems.constructions._base import Params


def text(rows):
    return "".join(" ".join(map(str, r)) + "\n" for r in rows).encode()


# ---- objects --------------------------------------------------------------------------------


def paley(q):
    squares = {x * x % q for x in range(1, q)}
    return [[int(i != j and (i - j) % q in squares) for j in range(q)] for i in range(q)]


def k42():
    rows = paley(41)
    rows = [r + [r[0]] for r in rows] + [[*rows[0], 0]]
    rows[0][41] = rows[41][0] = 1
    return rows


def k42_colour0_full():
    """P(37) + 5 vertices whose every edge has colour 1: colour 0 stays K5-free on 42 vertices."""
    rows = [r + [1] * 5 for r in paley(37)] + [[1] * 42 for _ in range(5)]
    for i in range(42):
        rows[i][i] = 0
    return rows


def matrix(rows):
    return f"{len(rows)}\n".encode() + b"".join("".join(map(str, r)).encode() + b"\n" for r in rows)


def cap400():
    pts = list(itertools.product(range(3), repeat=4))
    third = {(a, b): tuple((-x - y) % 3 for x, y in zip(a, b)) for a in pts for b in pts}
    rng = np.random.default_rng(1)
    while True:
        cap = set()
        for i in rng.permutation(81).tolist():
            p = pts[i]
            if all(third[p, q] not in cap for q in cap):
                cap.add(p)
        if len(cap) == 20:
            break
    return [a + b for a in sorted(cap) for b in sorted(cap)]


def d11(scale=1):
    out = []
    for i, j in itertools.combinations(range(11), 2):
        for a, b in itertools.product((1, -1), repeat=2):
            p = [0] * 11
            p[i], p[j] = a * scale, b * scale
            out.append(p)
    return out


# ---- plain-Python checks ----------------------------------------------------------------------


def py_ramsey(rows, s=5, stop=True):
    n, found = len(rows), 0
    for sub in itertools.combinations(range(n), s):
        c = rows[sub[0]][sub[1]]
        if all(rows[i][j] == c for i, j in itertools.combinations(sub, 2)):
            found += 1
            if stop:
                return found
    return found


def py_cap(vecs):
    """The number of pairs whose line's third point is in the set (0: a cap), over every pair."""
    seen = set(map(tuple, vecs))
    return sum(tuple((-x - y) % 3 for x, y in zip(a, b)) in seen for a, b in itertools.combinations(vecs, 2))


def py_kissing(pts):
    """The number of pairs closer than the largest norm (0: valid), over every pair."""
    m = max(sum(x * x for x in p) for p in pts)
    return sum(sum((a - b) ** 2 for a, b in zip(p, q)) < m for p, q in itertools.combinations(pts, 2))


def py_pairs_distinct(xs, op):
    vals = [op(a, b) for a, b in itertools.combinations_with_replacement(sorted(xs), 2)]
    return len(set(vals)) == len(vals)


def py_covering(blocks, v=13, t=3):
    sets = [set(b) for b in blocks]
    return all(any(set(c) <= b for b in sets) for c in itertools.combinations(range(1, v + 1), t))


def py_cover(xs, m=1000):
    return len({(a - b) % m for a in xs for b in xs}) == m


def py_sphere(pts):
    norms = [math.sqrt(sum(x * x for x in p)) for p in pts]
    best = max(
        sum(a * b for a, b in zip(p, q)) / (norms[i] * norms[j])
        for (i, p), (j, q) in itertools.combinations(enumerate(pts), 2)
    )
    return math.degrees(math.acos(min(1.0, best)))


# ---- the table --------------------------------------------------------------------------------


def cases():
    cap = cap400()
    rng = np.random.default_rng(2)
    extra = list(dict.fromkeys(tuple(v) for v in rng.integers(0, 3, (400, 8)).tolist() if tuple(v) not in set(cap)))
    extra = extra[:112]  # distinct, so the checker's duplicate test passes and its pair scan runs
    ogr26 = [
        0,
        1,
        33,
        83,
        104,
        110,
        124,
        163,
        185,
        200,
        203,
        249,
        251,
        258,
        314,
        318,
        343,
        356,
        386,
        430,
        440,
        456,
        464,
        475,
        487,
        492,
    ]
    wich = np.concatenate([[0], np.cumsum([1] * 5 + [6] + [11] * 5 + [23] * 16 + [12] * 6 + [1] * 5)]).tolist()
    sphere = np.random.default_rng(3).normal(size=(30, 4)).tolist()
    more = np.random.default_rng(4).integers(-3, 4, (400, 11))
    k593 = d11() + list(dict.fromkeys(tuple(p) for p in more.tolist() if any(p)))[:373]  # no zero point
    covering = [  # a 13-block (13,7,3) covering (demo-strong's annealing): both check every triple
        [4, 5, 7, 8, 9, 11, 13],
        [3, 4, 5, 6, 7, 8, 10],
        [1, 2, 4, 6, 7, 8, 12],
        [3, 6, 7, 9, 10, 11, 13],
        [2, 3, 4, 6, 8, 10, 11],
        [1, 4, 5, 6, 10, 11, 12],
        [1, 3, 5, 8, 11, 12, 13],
        [1, 2, 5, 7, 9, 11, 12],
        [1, 6, 8, 9, 10, 12, 13],
        [2, 3, 5, 8, 9, 11, 13],
        [1, 3, 4, 6, 9, 12, 13],
        [1, 2, 3, 7, 10, 12, 13],
        [2, 4, 5, 6, 9, 10, 13],
    ]
    return [
        (
            "ramsey K42 (colour 0 K5-free: full scan)",
            "ramsey_coloring",
            {"clique": 5},
            matrix(k42_colour0_full()),
            lambda: py_ramsey(k42_colour0_full(), stop=False),
        ),
        (
            "ramsey K42 (P(41)+1, has a K5)",
            "ramsey_coloring",
            {"clique": 5},
            b"42\n" + b"".join("".join(map(str, r)).encode() + b"\n" for r in k42()),
            lambda: py_ramsey(k42()),
        ),
        (
            "ramsey K37 Paley (valid, full scan)",
            "ramsey_coloring",
            {"clique": 5},
            b"37\n" + b"".join("".join(map(str, r)).encode() + b"\n" for r in paley(37)),
            lambda: py_ramsey(paley(37)),
        ),
        ("cap set 400 (valid, full scan)", "cap_set", {"dim": 8}, text(cap), lambda: py_cap(cap)),
        ("cap set 512 (invalid)", "cap_set", {"dim": 8}, text(cap + extra), lambda: py_cap(cap + extra)),
        ("kissing D11 220 (valid)", "kissing_config", {"dim": 11}, text(d11()), lambda: py_kissing(d11())),
        (
            "kissing D11 x 2^30 (exact big ints)",
            "kissing_config",
            {"dim": 11},
            text(d11(2**30)),
            lambda: py_kissing(d11(2**30)),
        ),
        ("kissing 593 points (invalid)", "kissing_config", {"dim": 11}, text(k593), lambda: py_kissing(k593)),
        (
            "golomb 14 marks",
            "golomb_ruler",
            {"marks": 14},
            text([[0, 4, 6, 20, 35, 52, 59, 77, 78, 86, 89, 99, 122, 127]]),
            lambda: py_pairs_distinct(
                [0, 4, 6, 20, 35, 52, 59, 77, 78, 86, 89, 99, 122, 127], lambda a, b: b - a if a != b else -1
            ),
        ),
        (
            "sidon 26 in [1,500]",
            "sidon_set",
            {"low": 1, "high": 500},
            text([[x + 1 for x in ogr26]]),
            lambda: py_pairs_distinct([x + 1 for x in ogr26], lambda a, b: a + b),
        ),
        (
            "covering 13 blocks (13,7,3), valid",
            "covering_design",
            {"v": 13, "k": 7, "t": 3},
            text(covering),
            lambda: py_covering(covering),
        ),
        ("difference cover 39 mod 1000", "difference_cover", {"modulus": 1000}, text([wich]), lambda: py_cover(wich)),
        (
            "spherical code 30 in R^4",
            "spherical_code",
            {"dim": 4, "points": 30},
            text(sphere),
            lambda: py_sphere(sphere),
        ),
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    print(f"{'object':40s} {'status':>18s} {'numpy':>10s} {'plain Python':>13s} {'ratio':>7s}")
    for label, problem, params, cert, plain in cases():
        impl, inst = get_problem(problem), Params(params, "bench")
        t_np, result = best_of(
            lambda impl=impl, inst=inst, cert=cert: impl.check_certificate(inst, cert, {}), args.repeat
        )
        t_py, _ = best_of(plain, max(1, args.repeat // 5))
        print(f"{label:40s} {result.status:>18s} {t_np * 1e3:8.2f}ms {t_py * 1e3:11.1f}ms {t_py / t_np:6.0f}x")
    print(f"(the plain K42 full scan visits all {math.comb(42, 5):,} 5-subsets; cap / kissing loops count every pair)")


if __name__ == "__main__":
    main()
