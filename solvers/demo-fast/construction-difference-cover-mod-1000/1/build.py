"""demo-fast: the best two-block difference cover of Z_1000.

{0, ..., a - 1} together with {a, 2a, ..., b a} has every difference 1 .. b a (j a - i for
0 <= i < a, 1 <= j <= b) and their negatives; the smallest a + b with b a >= 500 is searched. Usage: build.py SOLUTION
"""

import os
import sys

M = 1000


def main():
    out = sys.argv[1]
    a, b = min(((a, -(-(M // 2) // a)) for a in range(1, M // 2)), key=lambda ab: ab[0] + ab[1])
    cover = sorted(set(range(a)) | {a * k for k in range(1, b + 1)})
    tmp = out + ".tmp"
    with open(tmp, "w") as f:
        f.write(f"# two-block cover a={a} b={b}: {len(cover)} residues\n" + " ".join(map(str, cover)) + "\n")
    os.replace(tmp, out)


if __name__ == "__main__":
    main()
