"""demo-weak: the square-root two-block difference cover {0..31} u {32 k : 1 <= k <= 31} of Z_1000.
Usage: build.py SOLUTION
"""

import os
import sys


def main():
    out = sys.argv[1]
    cover = sorted(set(range(32)) | {32 * k for k in range(1, 32)})
    tmp = out + ".tmp"
    with open(tmp, "w") as f:
        f.write(" ".join(map(str, cover)) + "\n")
    os.replace(tmp, out)


if __name__ == "__main__":
    main()
