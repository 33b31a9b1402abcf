"""A correct, well-behaved solver: alternating sides, with the right claimed value."""

import sys

import numpy as np

data = open(sys.argv[1]).read().split()
n, m = int(data[0]), int(data[1])
edges = np.array(data[2:], dtype=np.int64).reshape(m, 3)
side = np.arange(n) % 2
cut = int(edges[side[edges[:, 0] - 1] != side[edges[:, 1] - 1], 2].sum())
open(sys.argv[2], "w").write(" ".join(map(str, side)) + f"\nvalue {cut}\n")
