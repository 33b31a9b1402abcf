"""Item 90: whole numbers of packages A and B; their shirts and pants within the inventories; each
package at least its minimum sales; maximise revenue."""

from pathlib import Path

import pulp

from tcsexam.orspace.refmodel import main, number, parameters, solve

READING = "whole packages within shirt and pant inventories, minimum sales, maximise revenue"


def build(workspace: Path) -> dict:
    v = parameters(workspace)
    x = {p: pulp.LpVariable(p, lowBound=number(v, f"package_{p}_min_sales"), cat="Integer") for p in "ab"}
    prob = pulp.LpProblem("item90", pulp.LpMaximize)
    prob += pulp.lpSum(number(v, f"package_{p}_price") * x[p] for p in x)
    for item in ("shirts", "pants"):
        prob += pulp.lpSum(number(v, f"package_{p}_{item}") * x[p] for p in x) <= number(v, f"{item}_inventory")
    return solve(prob)


if __name__ == "__main__":
    main(build)
