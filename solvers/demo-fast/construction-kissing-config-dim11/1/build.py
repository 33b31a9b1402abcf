"""demo-fast: a kissing configuration in dimension 11 from a binary code.

The lexicographic code of length 11 and minimum distance 3 (the shortened Hamming code, 128
words) mapped to +-1 vectors: |x|^2 = 11 and two words at Hamming distance k >= 3 are at
|x - y|^2 = 4 k >= 12 >= 11. Usage: build.py SOLUTION
"""

import os
import sys

N = 11


def main():
    out = sys.argv[1]
    code = []
    for w in range(2**N):
        if all(bin(w ^ c).count("1") >= 3 for c in code):
            code.append(w)
    tmp = out + ".tmp"
    with open(tmp, "w") as f:
        f.write(f"# {len(code)} codewords as +-1 vectors\n")
        for w in code:
            f.write(" ".join("1" if w >> i & 1 else "-1" for i in range(N)) + "\n")
    os.replace(tmp, out)


if __name__ == "__main__":
    main()
