"""demo-fast: the Paley colouring of K_29 (edge ij coloured 1 iff i - j is a non-zero square
mod 29). Its clique number is 4, and it is self-complementary, so neither colour has a K5.
Usage: build.py SOLUTION
"""

import os
import sys

P = 29


def main():
    out = sys.argv[1]
    residues = {(k * k) % P for k in range(1, P)}
    lines = [str(P)]
    for i in range(P):
        lines.append("".join("1" if i != j and (j - i) % P in residues else "0" for j in range(P)))
    tmp = out + ".tmp"
    with open(tmp, "w") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(tmp, out)


if __name__ == "__main__":
    main()
