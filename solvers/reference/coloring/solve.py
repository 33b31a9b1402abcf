"""Reference graph-colouring solver: DSatur, then TabuCol (numpy) to remove one colour at a time
until half of the time limit.

usage: python3 solve.py INSTANCE SOLUTION TIME_LIMIT SEED
Reads DIMACS `.col` (`p edge n m`, `e u v`; duplicate edges are fine), writes `value <k>` and one
colour (1..k) per vertex to SOLUTION atomically. An independent program: imports only numpy.
"""

import heapq
import os
import sys
import time

import numpy as np

START = time.monotonic()


def read_col(path):
    n = 0
    us, vs = [], []
    with open(path, "rb") as fh:
        for line in fh:
            parts = line.split()
            if not parts:
                continue
            if parts[0] == b"p":
                n = int(parts[2])
            elif parts[0] == b"e":
                us.append(int(parts[1]) - 1)
                vs.append(int(parts[2]) - 1)
    u, v = np.array(us, dtype=np.int64), np.array(vs, dtype=np.int64)
    lo, hi = np.minimum(u, v), np.maximum(u, v)
    keys = np.unique(lo * n + hi)
    lo, hi = keys // n, keys % n
    rows = np.concatenate([lo, hi])
    cols = np.concatenate([hi, lo])
    order = np.argsort(rows, kind="stable")
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.add.at(indptr, rows + 1, 1)
    return n, np.cumsum(indptr), cols[order]


def dsatur(n, indptr, nbr, rng):
    colour = -np.ones(n, dtype=np.int64)
    degree = np.diff(indptr)
    tiebreak = rng.random(n)
    seen = [set() for _ in range(n)]
    heap = [(0, -int(degree[i]), tiebreak[i], i) for i in range(n)]
    heapq.heapify(heap)
    while heap:
        _, _, _, i = heapq.heappop(heap)
        if colour[i] >= 0:
            continue
        c = 0
        while c in seen[i]:
            c += 1
        colour[i] = c
        for j in nbr[indptr[i] : indptr[i + 1]].tolist():
            if colour[j] < 0 and c not in seen[j]:
                seen[j].add(c)
                heapq.heappush(heap, (-len(seen[j]), -int(degree[j]), tiebreak[j], j))
    return colour


def tabucol(n, indptr, nbr, k, start, rng, deadline):
    """Try to find a conflict-free k-colouring starting from `start` (colours >= k are reset)."""
    colour = start.copy()
    sizes = np.bincount(colour, minlength=k + 1)
    order = np.argsort(-sizes, kind="stable")  # drop the smallest colour classes
    colour = np.argsort(order)[colour]
    high = colour >= k
    colour[high] = rng.integers(0, k, size=int(high.sum()))
    gamma = np.zeros((n, k), dtype=np.int64)  # neighbours of v having colour c
    src = np.repeat(np.arange(n), np.diff(indptr))
    np.add.at(gamma, (src, colour[nbr]), 1)
    tabu = np.zeros((n, k), dtype=np.int64)
    conflicts = int(gamma[np.arange(n), colour].sum()) // 2
    best_conf, it = conflicts, 0
    while conflicts > 0:
        if it % 128 == 0 and time.monotonic() > deadline:
            return None
        own = gamma[np.arange(n), colour]
        cand = np.flatnonzero(own > 0)
        delta = gamma[cand] - own[cand, None]
        delta[np.arange(cand.size), colour[cand]] = 1 << 30
        is_tabu = tabu[cand] > it
        aspire = conflicts + delta < best_conf
        delta = np.where(is_tabu & ~aspire, 1 << 30, delta)
        flat = int(np.argmin(delta + rng.random(delta.shape) * 0.5))
        r, c = divmod(flat, k)
        if delta[r, c] >= 1 << 30:
            it += 1
            continue
        v, old = int(cand[r]), int(colour[cand[r]])
        neighbours = nbr[indptr[v] : indptr[v + 1]]
        gamma[neighbours, old] -= 1
        gamma[neighbours, c] += 1
        colour[v] = c
        conflicts += int(delta[r, c])
        tabu[v, old] = it + int(0.6 * conflicts) + int(rng.integers(0, 10))
        best_conf = min(best_conf, conflicts)
        it += 1
    return colour


def write(path, colour):
    used = np.unique(colour)
    relabel = np.searchsorted(used, colour) + 1
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w") as fh:
        fh.write(f"value {used.size}\n" + " ".join(map(str, relabel.tolist())) + "\n")
    os.replace(tmp, path)


def main():
    instance, solution = sys.argv[1], sys.argv[2]
    limit = float(sys.argv[3]) if len(sys.argv) > 3 else 10.0
    seed = int(sys.argv[4]) if len(sys.argv) > 4 else 0
    deadline = START + 0.5 * limit
    rng = np.random.default_rng(seed)
    n, indptr, nbr = read_col(instance)
    best = dsatur(n, indptr, nbr, rng)
    write(solution, best)
    k = int(best.max()) + 1
    while k > 1 and time.monotonic() < deadline:
        found = tabucol(n, indptr, nbr, k - 1, best, rng, deadline)
        if found is None:
            break
        best, k = found, k - 1
        write(solution, best)


if __name__ == "__main__":
    main()
