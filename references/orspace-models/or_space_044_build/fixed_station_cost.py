"""Item 44: ship from the production points through the marshaling stations to the demand points;
shipments out of a production point within its output, every demand met, a station's throughput
within its capacity and only when it is used, which costs its fixed cost; minimise transport plus
fixed costs."""

from pathlib import Path

import pulp

from tcsexam.orspace.refmodel import main, number, parameters, solve, table

READING = "two-stage transshipment; output limits, demands met, station capacity; fixed cost of each station used"


def build(workspace: Path) -> dict:
    v = parameters(workspace)
    m, n, p = (int(number(v, k)) for k in ("m", "n", "p"))
    first = {(int(r["i"]), int(r["k"])): float(r["c_ik"]) for r in table(workspace, "table_1")}
    second = {(int(r["k"]), int(r["j"])): float(r["c'_kj"]) for r in table(workspace, "table_2")}
    x = {a: pulp.LpVariable(f"x_{a[0]}_{a[1]}", lowBound=0) for a in first}
    y = {a: pulp.LpVariable(f"y_{a[0]}_{a[1]}", lowBound=0) for a in second}
    use = {k: pulp.LpVariable(f"use_{k}", cat="Binary") for k in range(1, p + 1)}
    prob = pulp.LpProblem("item44", pulp.LpMinimize)
    prob += (
        pulp.lpSum(first[a] * x[a] for a in first)
        + pulp.lpSum(second[a] * y[a] for a in second)
        + pulp.lpSum(number(v, f"f_{k}") * use[k] for k in use)
    )
    for i in range(1, m + 1):
        prob += pulp.lpSum(x[a] for a in first if a[0] == i) <= number(v, f"a_{i}")
    for j in range(1, n + 1):
        prob += pulp.lpSum(y[a] for a in second if a[1] == j) >= number(v, f"b_{j}")
    for k in use:
        inflow = pulp.lpSum(x[a] for a in first if a[1] == k)
        prob += inflow == pulp.lpSum(y[a] for a in second if a[0] == k)
        prob += inflow <= number(v, f"q_{k}") * use[k]
    return solve(prob)


if __name__ == "__main__":
    main(build)
