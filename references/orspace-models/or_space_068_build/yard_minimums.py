"""Item 68: coal from yards A and B to areas 1-3; each yard ships at least its monthly minimum,
each area gets exactly its demand; cost = tons x distance; minimise it."""

from pathlib import Path

import pulp

from tcsexam.orspace.refmodel import main, number, parameters, solve, table

READING = "each yard ships at least its minimum, each area gets its demand; cost = tons x km"


def build(workspace: Path) -> dict:
    v = parameters(workspace)
    dist = {(r["Coal_Yard"], r["Residential_Area"]): float(r["Distance_km"]) for r in table(workspace, "table_1")}
    x = {k: pulp.LpVariable(f"x_{k[0]}_{k[1]}", lowBound=0) for k in dist}
    prob = pulp.LpProblem("item68", pulp.LpMinimize)
    prob += pulp.lpSum(dist[k] * x[k] for k in dist)
    for yard in sorted({y for y, _ in dist}):
        prob += pulp.lpSum(x[k] for k in dist if k[0] == yard) >= number(v, f"min_coal_yard_{yard}")
    for area in sorted({a for _, a in dist}):
        prob += pulp.lpSum(x[k] for k in dist if k[1] == area) == number(v, f"residential_area_{area}_demand")
    return solve(prob)


if __name__ == "__main__":
    main(build)
