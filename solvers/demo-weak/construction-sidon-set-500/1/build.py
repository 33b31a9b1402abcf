"""demo-weak: the Mian-Chowla sequence cut at 500 (each next integer the smallest keeping all
pairwise sums distinct). Usage: build.py SOLUTION
"""

import os
import sys


def main():
    out = sys.argv[1]
    seq, sums = [], set()
    for x in range(1, 501):
        new = {x + y for y in seq} | {2 * x}
        if len(new) == len(seq) + 1 and not new & sums:
            seq.append(x)
            sums |= new
    tmp = out + ".tmp"
    with open(tmp, "w") as f:
        f.write(" ".join(map(str, seq)) + "\n")
    os.replace(tmp, out)


if __name__ == "__main__":
    main()
