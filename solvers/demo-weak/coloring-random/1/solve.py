"""demo-weak colouring candidate: first-fit greedy colouring in vertex order.

A quadratic pure-Python implementation with a deliberate pause per vertex: graphs with more than
about 100 vertices run past the time limit (timeout); the small ones get a valid colouring.
"""

import sys
import time

instance, solution = sys.argv[1], sys.argv[2]
limit = float(sys.argv[3]) if len(sys.argv) > 3 else 10.0
n, edges = 0, []
with open(instance) as fh:
    for line in fh:
        parts = line.split()
        if parts and parts[0] == "p":
            n = int(parts[2])
        elif parts and parts[0] == "e":
            edges.append((int(parts[1]) - 1, int(parts[2]) - 1))
colour = [-1] * n
for v in range(n):
    used = {colour[b] for a, b in edges if a == v} | {colour[a] for a, b in edges if b == v}
    c = 0
    while c in used:
        c += 1
    colour[v] = c
    time.sleep(limit / 100.0)  # "slow" vertex processing
with open(solution, "w") as fh:
    fh.write("\n".join(map(str, colour)) + "\n")
