"""Parse and check times of the problem modules on large synthetic instances, against a
straightforward pure-Python loop doing the same work. Prints times and ratios; asserts nothing.

usage: .venv/bin/python benchmarks/checkers.py [--repeat R] [--quick]

Sizes: MaxCut 1,000,000 edges (100,000 vertices), CNF 1,000,000 clauses (3-SAT, 234,742
variables), TSP 10,000 cities (EUC_2D), colouring 500,000 edges, WCNF 200,000 soft clauses.
Targets (issue 3): MaxCut certificate checked < 0.1 s and parsed < 1 s on 1M edges; >= 20x faster
than the pure-Python loop.
"""

from __future__ import annotations

import argparse
import math
import tempfile
import time
from pathlib import Path

import numpy as np

from tcsexam.problems import get_problem


def best_of(fn, repeat):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return min(times), result


# -- pure-Python baselines: the obvious loop a first checker would use -------------------------


def py_parse_maxcut(path):
    with open(path) as fh:
        n, m = map(int, fh.readline().split())
        edges = [tuple(map(int, line.split())) for line in fh]
    return n, m, edges


def py_check_maxcut(parsed, cert):
    n, _, edges = parsed
    side = [int(t) for t in cert.split()]
    assert len(side) == n and all(s in (0, 1) for s in side)
    return sum(w for i, j, w in edges if side[i - 1] != side[j - 1])


def py_parse_cnf(path):
    clauses, cur = [], []
    with open(path) as fh:
        for line in fh:
            if line[:1] in ("c", "p") or not line.strip():
                continue
            if line[:1] == "%":
                break
            for tok in line.split():
                lit = int(tok)
                if lit == 0:
                    clauses.append(cur)
                    cur = []
                else:
                    cur.append(lit)
    return clauses


def py_check_cnf(clauses, cert):
    true = set()
    for line in cert.splitlines():
        if line.startswith("v"):
            true.update(int(t) for t in line.split()[1:] if t != "0")
    return all(any(lit in true for lit in cl) for cl in clauses)


def py_parse_tsp(path):
    coords = {}
    with open(path) as fh:
        inside = False
        for line in fh:
            if line.startswith("NODE_COORD_SECTION"):
                inside = True
            elif line.startswith("EOF"):
                break
            elif inside:
                i, x, y = line.split()
                coords[int(i)] = (float(x), float(y))
    return coords


def py_check_tsp(coords, cert):
    tour = [int(t) for t in cert.split()]
    assert sorted(tour) == list(range(1, len(coords) + 1))
    total = 0
    for a, b in zip(tour, tour[1:] + tour[:1]):
        (x1, y1), (x2, y2) = coords[a], coords[b]
        total += int(math.sqrt((x1 - x2) ** 2 + (y1 - y2) ** 2) + 0.5)
    return total


def row(name, ours, theirs):
    ratio = theirs / ours if ours > 0 else float("inf")
    print(f"  {name:<22} ours {ours * 1000:9.1f} ms   pure Python {theirs * 1000:9.1f} ms   ratio {ratio:6.1f}x")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="10x smaller instances")
    args = ap.parse_args()
    scale = 10 if args.quick else 1
    rng = np.random.default_rng(0)
    tmp = Path(tempfile.mkdtemp(prefix="tcsexam-bench-"))

    # MaxCut: 1M edges
    n, m = 100_000 // scale, 1_000_000 // scale
    u = rng.integers(1, n + 1, size=m)
    v = (u + rng.integers(1, n, size=m) - 1) % n + 1
    w = rng.choice([-1, 1], size=m)
    path = tmp / "maxcut.txt"
    path.write_text(f"{n} {m}\n" + "\n".join(f"{a} {b} {c}" for a, b, c in zip(u, v, w)) + "\n")
    cert = " ".join(map(str, rng.integers(0, 2, size=n)))
    p = get_problem("maxcut")
    print(f"MaxCut: {n} vertices, {m} edges ({path.stat().st_size / 1e6:.1f} MB)")
    t_parse, inst = best_of(lambda: p.parse_instance(path), args.repeat)
    t_py_parse, py_inst = best_of(lambda: py_parse_maxcut(path), 1)
    t_check, res = best_of(lambda: p.check_certificate(inst, cert.encode(), {}), args.repeat)
    t_py_check, py_val = best_of(lambda: py_check_maxcut(py_inst, cert), 1)
    assert res.value == py_val
    row("parse instance", t_parse, t_py_parse)
    row("check certificate", t_check, t_py_check)
    print(
        f"  targets: parse < 1 s: {t_parse < 1.0}; check < 0.1 s: {t_check < 0.1}; "
        f"check >= 20x: {t_py_check / t_check >= 20}"
    )

    # SAT: 1M clauses
    nv, nc = int(1_000_000 / scale / 4.26), 1_000_000 // scale
    model = rng.random(nv + 1) < 0.5
    var = np.stack([rng.choice(nv, 3, replace=False) for _ in range(0)] or [np.zeros(3)], 0)
    var = rng.integers(1, nv + 1, size=(nc, 3))
    signs = rng.choice([-1, 1], size=(nc, 3))
    sat_by_model = (signs > 0) == model[var]
    fix = ~sat_by_model.any(axis=1)
    signs[fix, 0] *= -1  # planted: every clause satisfied by `model`
    lits = var * signs
    path = tmp / "big.cnf"
    path.write_text(f"p cnf {nv} {nc}\n" + "\n".join(f"{a} {b} {c} 0" for a, b, c in lits) + "\n")
    vals = np.where(model[1:], np.arange(1, nv + 1), -np.arange(1, nv + 1))
    cert = (
        "s SATISFIABLE\n" + "\n".join("v " + " ".join(map(str, vals[k : k + 10])) for k in range(0, nv, 10)) + "\nv 0\n"
    )
    p = get_problem("sat")
    print(f"SAT: {nv} variables, {nc} clauses ({path.stat().st_size / 1e6:.1f} MB)")
    t_parse, inst = best_of(lambda: p.parse_instance(path), args.repeat)
    t_py_parse, py_inst = best_of(lambda: py_parse_cnf(path), 1)
    t_check, res = best_of(lambda: p.check_certificate(inst, cert.encode(), {}), args.repeat)
    t_py_check, ok = best_of(lambda: py_check_cnf(py_inst, cert), 1)
    assert res.solved and ok
    row("parse instance", t_parse, t_py_parse)
    row("check certificate", t_check, t_py_check)

    # TSP: 10,000 cities
    n = 10_000 // scale
    p = get_problem("tsp")
    path = tmp / "big.tsp"
    path.write_text(p.generate(rng, n))
    cert = " ".join(map(str, rng.permutation(n) + 1))
    print(f"TSP: {n} cities (EUC_2D)")
    t_parse, inst = best_of(lambda: p.parse_instance(path), args.repeat)
    t_py_parse, py_inst = best_of(lambda: py_parse_tsp(path), 1)
    t_check, res = best_of(lambda: p.check_certificate(inst, cert.encode(), {}), args.repeat)
    t_py_check, py_val = best_of(lambda: py_check_tsp(py_inst, cert), 1)
    assert res.value == py_val
    row("parse instance", t_parse, t_py_parse)
    row("check certificate", t_check, t_py_check)

    # colouring and WCNF: ours only (same machinery as above)
    n, m = 50_000 // scale, 500_000 // scale
    a = rng.integers(1, n + 1, size=m)
    b = (a + rng.integers(1, n, size=m) - 1) % n + 1
    path = tmp / "big.col"
    path.write_text(f"p edge {n} {m}\n" + "\n".join(f"e {x} {y}" for x, y in zip(a, b)) + "\n")
    p = get_problem("coloring")
    t_parse, inst = best_of(lambda: p.parse_instance(path), args.repeat)
    cert = " ".join(map(str, np.arange(n))).encode()
    t_check, res = best_of(lambda: p.check_certificate(inst, cert, {}), args.repeat)
    assert res.status == "ok"
    print(f"Colouring: {n} vertices, {m} edge lines: parse {t_parse * 1000:.1f} ms, check {t_check * 1000:.1f} ms")
    p = get_problem("maxsat")
    path = tmp / "big.wcnf"
    path.write_text(p.generate(rng, 200_000 // 3 // scale))
    t_parse, inst = best_of(lambda: p.parse_instance(path), 1)
    cert = ("v " + "0" * inst.nvars).encode()
    t_check, res = best_of(lambda: p.check_certificate(inst, cert, {}), args.repeat)
    print(
        f"MaxSAT: {inst.nvars} variables, {inst.hard.count} hard + {inst.soft.count} soft: "
        f"parse {t_parse * 1000:.1f} ms, check {t_check * 1000:.1f} ms ({res.status})"
    )


if __name__ == "__main__":
    main()
