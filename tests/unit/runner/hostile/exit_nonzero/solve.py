"""Writes a correct certificate, then exits with code 3."""

import sys

n = int(open(sys.argv[1]).read().split()[0])
open(sys.argv[2], "w").write(" ".join(str(i % 2) for i in range(n)) + "\n")
sys.exit(3)
