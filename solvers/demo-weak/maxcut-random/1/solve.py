"""demo-weak MaxCut candidate: a seeded random partition (valid, far below the reference)."""

import random
import sys

instance, solution = sys.argv[1], sys.argv[2]
rng = random.Random(int(sys.argv[4]) if len(sys.argv) > 4 else 0)
with open(instance) as fh:
    n = int(fh.readline().split()[0])
with open(solution, "w") as fh:
    fh.write(" ".join(str(rng.randint(0, 1)) for _ in range(n)) + "\n")
