"""demo-fast: a 14-mark Golomb ruler by randomised greedy with restarts.

Each pass adds marks left to right, taking at random one of the two smallest positions that keep
every difference distinct; the shortest ruler of a fixed number of seeded passes is written.
Usage: build.py SOLUTION SEED
"""

import os
import sys

import numpy as np

MARKS = 14


def one_pass(rng):
    marks, diffs = [0], set()
    while len(marks) < MARKS:
        options, c = [], marks[-1] + 1
        while len(options) < 2:
            new = {c - m for m in marks}
            if len(new) == len(marks) and not new & diffs:
                options.append(c)
            c += 1
        pick = options[0] if rng.random() < 0.7 else options[1]
        diffs |= {pick - m for m in marks}
        marks.append(pick)
    return marks


def main():
    out, seed = sys.argv[1], int(sys.argv[2])
    rng = np.random.default_rng(seed)
    best = min((one_pass(rng) for _ in range(500)), key=lambda m: m[-1])
    tmp = out + ".tmp"
    with open(tmp, "w") as f:
        f.write(f"# randomised greedy ruler, length {best[-1]}\n" + " ".join(map(str, best)) + "\n")
    os.replace(tmp, out)


if __name__ == "__main__":
    main()
