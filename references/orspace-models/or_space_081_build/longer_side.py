"""Item 81: every car parks on one of the two sides; the cars on a side occupy the sum of their
lengths, at most the maximum per side; the street length occupied is that of the longer side (the
two sides run alongside each other from No. 1); minimise it."""

from pathlib import Path

import pulp

from tcsexam.orspace.refmodel import main, number, parameters, solve, table

READING = "each car on one side, side length = sum of its cars' lengths <= max, minimise the longer side"


def build(workspace: Path) -> dict:
    v = parameters(workspace)
    length = [float(r["lambda_i"]) for r in table(workspace, "table_1")]
    left = [pulp.LpVariable(f"left_{i}", cat="Binary") for i in range(len(length))]
    longest = pulp.LpVariable("longest", lowBound=0)
    side_left = pulp.lpSum(a * x for a, x in zip(length, left, strict=True))
    side_right = sum(length) - side_left
    prob = pulp.LpProblem("item81", pulp.LpMinimize)
    prob += longest
    for side in (side_left, side_right):
        prob += longest >= side
        prob += side <= number(v, "max_length_one_side")
    return solve(prob)


if __name__ == "__main__":
    main(build)
