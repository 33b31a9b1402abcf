"""demo-weak: the Turan colouring of K_16: four groups of four vertices, colour 1 inside a group
and 0 between groups (a colour-0 K5 would need five groups, a colour-1 K5 a group of five).
Usage: build.py SOLUTION
"""

import os
import sys


def main():
    out = sys.argv[1]
    rows = ["".join("1" if i != j and i // 4 == j // 4 else "0" for j in range(16)) for i in range(16)]
    tmp = out + ".tmp"
    with open(tmp, "w") as f:
        f.write("16\n" + "\n".join(rows) + "\n")
    os.replace(tmp, out)


if __name__ == "__main__":
    main()
