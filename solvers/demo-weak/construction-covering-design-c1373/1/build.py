"""demo-weak: a (13, 7, 3) covering: every block {1..6} + one of the other 7 points, then, for
each triple still uncovered, the first block (in lexicographic order) containing it.
Usage: build.py SOLUTION
"""

import itertools
import os
import sys


def main():
    out = sys.argv[1]
    blocks = [set(range(1, 7)) | {p} for p in range(7, 14)]
    for t in itertools.combinations(range(1, 14), 3):
        if not any(set(t) <= b for b in blocks):
            rest = [p for p in range(1, 14) if p not in t][: 7 - 3]
            blocks.append(set(t) | set(rest))
    tmp = out + ".tmp"
    with open(tmp, "w") as f:
        f.writelines(" ".join(map(str, sorted(b))) + "\n" for b in blocks)
    os.replace(tmp, out)


if __name__ == "__main__":
    main()
