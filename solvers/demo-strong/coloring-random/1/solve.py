"""demo-strong colouring candidate: randomised DSatur restarts, 85% of the limit.

usage: python3 solve.py INSTANCE SOLUTION TIME_LIMIT SEED
Reads DIMACS `.col` (`p edge n m`, `e u v`), writes `value <k>` and one colour (0..k-1) per vertex.
"""

import os
import random
import sys
import time

START = time.monotonic()
#: share of the time limit spent searching (the rest covers start-up, output and a loaded machine)
BUDGET = 0.85


def read_col(path):
    n, adj = 0, None
    with open(path) as fh:
        for line in fh:
            parts = line.split()
            if not parts:
                continue
            if parts[0] == "p":
                n = int(parts[2])
                adj = [set() for _ in range(n)]
            elif parts[0] == "e":
                u, v = int(parts[1]) - 1, int(parts[2]) - 1
                if u != v:
                    adj[u].add(v)
                    adj[v].add(u)
    return n, adj


def dsatur(n, adj, rng):
    colour = [-1] * n
    sat = [set() for _ in range(n)]
    noise = [rng.random() for _ in range(n)]
    uncoloured = set(range(n))
    while uncoloured:
        v = max(uncoloured, key=lambda x: (len(sat[x]), len(adj[x]), noise[x]))
        c = 0
        while c in sat[v]:
            c += 1
        colour[v] = c
        uncoloured.discard(v)
        for w in adj[v]:
            sat[w].add(c)
    return colour


def write(path, colour):
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w") as fh:
        fh.write(f"value {max(colour) + 1}\n")
        fh.write("\n".join(map(str, colour)) + "\n")
    os.replace(tmp, path)


def main():
    instance, solution = sys.argv[1], sys.argv[2]
    limit = float(sys.argv[3]) if len(sys.argv) > 3 else 10.0
    rng = random.Random(int(sys.argv[4]) if len(sys.argv) > 4 else 0)
    deadline = START + BUDGET * limit
    n, adj = read_col(instance)
    best = dsatur(n, adj, rng)
    write(solution, best)
    while time.monotonic() < deadline:
        colour = dsatur(n, adj, rng)
        if max(colour) < max(best):
            best = colour
            write(solution, best)


if __name__ == "__main__":
    main()
