"""demo-fast TSP candidate: multi-start nearest neighbour + 2-opt and Or-opt (numpy): 3n restarts
(or 70% of the limit, whichever comes first).

usage: python3 solve.py INSTANCE SOLUTION TIME_LIMIT SEED
Distances come from tsplib95 (every TSPLIB weight type: EUC_2D, ATT, GEO, EXPLICIT, ...). Writes
`value <length>` and the tour as city numbers 1..n, one per line, atomically.
"""

import os
import sys
import time

START = time.monotonic()

import numpy as np  # noqa: E402
import tsplib95  # noqa: E402


def write(path, tour, length):
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w") as fh:
        fh.write(f"value {int(length)}\n")
        fh.write("\n".join(str(int(c) + 1) for c in tour) + "\n")
    os.replace(tmp, path)


def tour_length(d, tour):
    return float(d[tour, np.roll(tour, -1)].sum())


def two_opt(d, tour, deadline):
    n = len(tour)
    improved = True
    while improved and time.monotonic() < deadline:
        improved = False
        for i in range(n - 2):
            a, b = tour[i], tour[i + 1]
            c = tour[i + 2 :]
            dn = np.roll(tour, -1)[i + 2 :]
            delta = d[a, c] + d[b, dn] - d[a, b] - d[c, dn]
            if i == 0:
                delta = delta[:-1] if len(delta) > 0 else delta
            if len(delta) == 0:
                continue
            j = int(np.argmin(delta))
            if delta[j] < -1e-9:
                j += i + 2
                tour[i + 1 : j + 1] = tour[i + 1 : j + 1][::-1].copy()
                improved = True
    return tour


def or_opt(d, tour):
    """Move single cities to their best position (one pass)."""
    n = len(tour)
    for _ in range(n):
        k = np.random.randint(n)
        city = tour[k]
        prev, nxt = tour[k - 1], tour[(k + 1) % n]
        gain = d[prev, city] + d[city, nxt] - d[prev, nxt]
        rest = np.delete(tour, k)
        cost = d[rest, city] + d[city, np.roll(rest, -1)] - d[rest, np.roll(rest, -1)]
        j = int(np.argmin(cost))
        if cost[j] < gain - 1e-9:
            tour = np.insert(rest, j + 1, city)
    return tour


def nearest_neighbour(d, start):
    n = len(d)
    seen = np.zeros(n, dtype=bool)
    tour = [start]
    seen[start] = True
    for _ in range(n - 1):
        row = np.where(seen, np.inf, d[tour[-1]])
        nxt = int(np.argmin(row))
        tour.append(nxt)
        seen[nxt] = True
    return np.array(tour)


def main():
    instance, solution = sys.argv[1], sys.argv[2]
    limit = float(sys.argv[3]) if len(sys.argv) > 3 else 10.0
    seed = int(sys.argv[4]) if len(sys.argv) > 4 else 0
    deadline = START + 0.7 * limit
    np.random.seed(seed)
    problem = tsplib95.load(instance)
    nodes = list(problem.get_nodes())
    n = len(nodes)
    d = np.array([[problem.get_weight(a, b) if a != b else 0 for b in nodes] for a in nodes], dtype=float)
    best = np.arange(n)
    best_len = tour_length(d, best)
    write(solution, best, best_len)
    starts = np.random.permutation(n)
    k = 0
    while k < 3 * n and time.monotonic() < deadline:  # a fixed budget: reproducible results
        tour = nearest_neighbour(d, int(starts[k % n])) if k < n else or_opt(d, best.copy())
        tour = two_opt(d, tour, deadline)
        length = tour_length(d, tour)
        if length < best_len - 1e-9:
            best, best_len = tour.copy(), length
            write(solution, best, best_len)
        k += 1
    write(solution, best, best_len)


if __name__ == "__main__":
    main()
