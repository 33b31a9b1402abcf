"""Check times of the construction checkers (tcsexam.problems.constructions) on their largest
realistic certificates, against a plain-Python check of the same object (itertools over every
pair / triple / 5-subset, Python integers). Prints times and ratios; asserts nothing.

usage: .venv/bin/python benchmarks/constructions.py [--repeat R]

Objects (each built here, no file needed):
  ramsey    K_42 colourings: P(41) plus one vertex (a K5 exists: both checkers stop at the first)
            and the full scan of a valid colouring, P(37) (no monochromatic K5: every 5-subset,
            435,897 of them, is visited by the plain loop; no valid K_42 colouring is bundled);
            plus the plain loop's full scan of all 850,668 5-subsets of K_42 (counting)
  cap set   400 vectors of F_3^8 (the product of two 20-caps of AG(4,3), valid: full scan) and
            512 vectors (that cap plus 112 more: invalid)
  kissing   the 220 roots of D11 (valid: every pair), the same scaled by 2^30 (the exact
            Python-integer path on every near-tight pair), and 593 points (D11 + 373 more: invalid)
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
    seen = set(map(tuple, vecs))
    for a, b in itertools.combinations(vecs, 2):
        c = tuple((-x - y) % 3 for x, y in zip(a, b))
        if c in seen:
            return False
    return True


def py_kissing(pts):
    m = max(sum(x * x for x in p) for p in pts)
    return all(sum((a - b) ** 2 for a, b in zip(p, q)) >= m for p, q in itertools.combinations(pts, 2))


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
    extra = [tuple(v) for v in rng.integers(0, 3, (400, 8)).tolist() if tuple(v) not in set(cap)][:112]
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
    k593 = d11() + np.random.default_rng(4).integers(-3, 4, (373, 11)).tolist()
    covering = [[1, 2, 3, 4, 5, 6, 7]] * 13  # 13 blocks (not a covering: the plain loop scans all triples)
    return [
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
            "covering 13 blocks (13,7,3)",
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
    t_all, count = best_of(lambda: py_ramsey(k42(), stop=False), 1)
    print(
        f"plain Python scan of all {math.comb(42, 5):,} 5-subsets of K42 (counting {count} monochromatic K5): {t_all:.2f} s"
    )


if __name__ == "__main__":
    main()
