"""demo-fast: a 324-vector cap set in F_3^8 as the product 9-cap x 9-cap x 4-cap.

The 9 points (x, y, x^2 + y^2) of AG(3, 3) form a cap (an elliptic quadric: a line meets it in
at most two points), {0,1}^2 is a 4-cap of AG(2, 3), and a product of caps is a cap.
Usage: build.py SOLUTION
"""

import itertools
import os
import sys


def main():
    out = sys.argv[1]
    quadric = [(x, y, (x * x + y * y) % 3) for x in range(3) for y in range(3)]
    square = list(itertools.product(range(2), repeat=2))
    vectors = [a + b + c for a in quadric for b in quadric for c in square]
    tmp = out + ".tmp"
    with open(tmp, "w") as f:
        f.write(f"# 9-cap x 9-cap x 4-cap: {len(vectors)} vectors of F_3^8\n")
        f.writelines(" ".join(map(str, v)) + "\n" for v in vectors)
    os.replace(tmp, out)


if __name__ == "__main__":
    main()
