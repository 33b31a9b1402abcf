"""demo-weak TSP candidate: the tour 1, 2, ..., n with a made-up claimed length.

The claimed `value` disagrees with the recomputed tour length, so the checker reports
certificate_failed on every instance: the demo's wrong-certificate task.
"""

import sys

instance, solution = sys.argv[1], sys.argv[2]
n = None
with open(instance) as fh:
    for line in fh:
        key, _, value = line.partition(":")
        if key.strip().upper() == "DIMENSION":
            n = int(value)
            break
with open(solution, "w") as fh:
    fh.write("value 1\n")  # not the tour's length
    fh.write("\n".join(str(i) for i in range(1, n + 1)) + "\n")
