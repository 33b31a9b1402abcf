"""Reference TSP solver: nearest neighbour, then iterated local search (2-opt + Or-opt, numpy
vectorised over move positions, double-bridge kicks) until half of the time limit.

usage: python3 solve.py INSTANCE SOLUTION TIME_LIMIT SEED
Reads TSPLIB (EUC_2D, CEIL_2D, ATT, GEO, EXPLICIT matrices), writes `value <length>` and the tour
(cities 1..n) to SOLUTION atomically. An independent program: imports only numpy.
"""

import os
import sys
import time

import numpy as np

START = time.monotonic()


def read_tsplib(path):
    with open(path, encoding="latin-1") as fh:
        lines = fh.read().splitlines()
    spec, sections, i = {}, {}, 0
    while i < len(lines):
        raw = lines[i].strip()
        i += 1
        if not raw:
            continue
        key = raw.split(":")[0].strip()
        if key == "EOF":
            break
        if key.endswith("_SECTION"):
            body = []
            while i < len(lines) and not (lines[i].strip()[:1].isalpha()):
                body.append(lines[i])
                i += 1
            sections[key] = " ".join(body).split()
            continue
        spec[key] = raw.split(":", 1)[1].strip() if ":" in raw else ""
    n = int(spec["DIMENSION"])
    kind = spec.get("EDGE_WEIGHT_TYPE", "").split()[0]
    if kind == "EXPLICIT":
        fmt = spec.get("EDGE_WEIGHT_FORMAT", "").split()[0]
        vals = np.array([float(x) for x in sections["EDGE_WEIGHT_SECTION"]]).astype(np.int64)
        d = np.zeros((n, n), dtype=np.int64)
        if fmt == "FULL_MATRIX":
            return vals.reshape(n, n)
        idx = {
            "UPPER_ROW": np.triu_indices(n, 1),
            "LOWER_COL": np.triu_indices(n, 1),
            "LOWER_ROW": np.tril_indices(n, -1),
            "UPPER_COL": np.tril_indices(n, -1),
            "UPPER_DIAG_ROW": np.triu_indices(n, 0),
            "LOWER_DIAG_COL": np.triu_indices(n, 0),
            "LOWER_DIAG_ROW": np.tril_indices(n, 0),
            "UPPER_DIAG_COL": np.tril_indices(n, 0),
        }[fmt]
        d[idx] = vals
        d[idx[1], idx[0]] = vals
        return d
    table = np.array([float(x) for x in sections["NODE_COORD_SECTION"]]).reshape(n, -1)
    xy = np.empty((n, table.shape[1] - 1))
    xy[table[:, 0].astype(int) - 1] = table[:, 1:]
    dx = xy[:, None, 0] - xy[None, :, 0]
    dy = xy[:, None, 1] - xy[None, :, 1]
    if kind == "EUC_2D":
        return np.floor(np.sqrt(dx * dx + dy * dy) + 0.5).astype(np.int64)
    if kind == "CEIL_2D":
        return np.ceil(np.sqrt(dx * dx + dy * dy)).astype(np.int64)
    if kind == "ATT":
        r = np.sqrt((dx * dx + dy * dy) / 10.0)
        t = np.floor(r + 0.5)
        return np.where(t < r, t + 1, t).astype(np.int64)
    if kind == "GEO":
        deg = np.trunc(xy)
        rad = 3.141592 * (deg + 5.0 * (xy - deg) / 3.0) / 180.0
        lat, lon = rad[:, 0], rad[:, 1]
        q1 = np.cos(lon[:, None] - lon[None, :])
        q2 = np.cos(lat[:, None] - lat[None, :])
        q3 = np.cos(lat[:, None] + lat[None, :])
        inner = np.clip(0.5 * ((1.0 + q1) * q2 - (1.0 - q1) * q3), -1.0, 1.0)
        return np.trunc(6378.388 * np.arccos(inner) + 1.0).astype(np.int64)
    raise SystemExit(f"unsupported EDGE_WEIGHT_TYPE {kind}")


def length(d, tour):
    return int(d[tour, np.roll(tour, -1)].sum())


def nearest_neighbour(d, start):
    n = len(d)
    seen = np.zeros(n, dtype=bool)
    tour = [start]
    seen[start] = True
    for _ in range(n - 1):
        row = np.where(seen, np.iinfo(np.int64).max, d[tour[-1]])
        nxt = int(np.argmin(row))
        tour.append(nxt)
        seen[nxt] = True
    return np.array(tour)


def two_opt(d, tour, deadline):
    """First-improvement 2-opt, each i scanning all j at once."""
    n = len(tour)
    improved = True
    while improved and time.monotonic() < deadline:
        improved = False
        for i in range(n - 2):
            a, b = tour[i], tour[i + 1]
            c = tour[i + 2 :]
            dd = np.roll(tour, -1)[i + 2 :]
            delta = d[a, c] + d[b, dd] - d[a, b] - d[c, dd]
            if i == 0:
                delta = delta[:-1]  # j = n-1 would reconnect the same edge
            k = int(np.argmin(delta)) if delta.size else 0
            if delta.size and delta[k] < 0:
                j = i + 2 + k
                tour[i + 1 : j + 1] = tour[i + 1 : j + 1][::-1]
                improved = True
    return tour


def or_opt(d, tour):
    """Move segments of 1-3 cities to their best other position (both orientations)."""
    n = len(tour)
    improved = False
    for seg in (1, 2, 3):
        i = 0
        while i + seg < n - 1:
            p, s0, s1, q = tour[i - 1] if i else tour[-1], tour[i], tour[i + seg - 1], tour[i + seg]
            remove_gain = d[p, s0] + d[s1, q] - d[p, q]
            rest = np.concatenate([tour[:i], tour[i + seg :]])
            x, y = rest, np.roll(rest, -1)
            add_fwd = d[x, s0] + d[s1, y] - d[x, y]
            add_rev = d[x, s1] + d[s0, y] - d[x, y]
            best_fwd, best_rev = int(np.argmin(add_fwd)), int(np.argmin(add_rev))
            if min(add_fwd[best_fwd], add_rev[best_rev]) < remove_gain:
                segment = tour[i : i + seg]
                if add_fwd[best_fwd] <= add_rev[best_rev]:
                    k = best_fwd
                else:
                    k, segment = best_rev, segment[::-1]
                tour = np.concatenate([rest[: k + 1], segment, rest[k + 1 :]])
                improved = True
            else:
                i += 1
    return tour, improved


def local_search(d, tour, deadline):
    while time.monotonic() < deadline:
        tour = two_opt(d, tour, deadline)
        tour, improved = or_opt(d, tour)
        if not improved:
            break
    return tour


def double_bridge(tour, rng):
    n = len(tour)
    a, b, c = sorted(rng.choice(np.arange(1, n), size=3, replace=False))
    return np.concatenate([tour[:a], tour[b:c], tour[a:b], tour[c:]])


def write(path, tour, value):
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w") as fh:
        fh.write(f"value {value}\n" + " ".join(str(int(x) + 1) for x in tour) + "\n")
    os.replace(tmp, path)


def main():
    instance, solution = sys.argv[1], sys.argv[2]
    limit = float(sys.argv[3]) if len(sys.argv) > 3 else 10.0
    seed = int(sys.argv[4]) if len(sys.argv) > 4 else 0
    deadline = START + 0.5 * limit
    rng = np.random.default_rng(seed)
    d = read_tsplib(instance)
    n = len(d)
    if n <= 3:
        tour = np.arange(n)
        write(solution, tour, length(d, tour))
        return
    tour = nearest_neighbour(d, int(rng.integers(n)))
    write(solution, tour, length(d, tour))
    best = local_search(d, tour, deadline)
    best_len = length(d, best)
    write(solution, best, best_len)
    while time.monotonic() < deadline:
        cand = local_search(d, double_bridge(best, rng), deadline)
        cand_len = length(d, cand)
        if cand_len <= best_len:
            if cand_len < best_len:
                write(solution, cand, cand_len)
            best, best_len = cand, cand_len
    write(solution, best, best_len)


if __name__ == "__main__":
    main()
