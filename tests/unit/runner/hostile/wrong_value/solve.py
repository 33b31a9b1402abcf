"""Writes a feasible partition but claims a larger cut than it has."""

import sys

n = int(open(sys.argv[1]).read().split()[0])
open(sys.argv[2], "w").write(" ".join("0" for _ in range(n)) + "\nvalue 1000000\n")
