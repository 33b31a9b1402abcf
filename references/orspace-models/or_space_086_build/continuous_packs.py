"""Item 86: packs of Meaties and Yummies within the grains and meat available and Meaties'
production capacity; profit per pack = price - grains and meat bought - variable cost; maximise."""

from pathlib import Path

import pulp

from tcsexam.orspace.refmodel import cell, main, number, parameters, solve, table

READING = "continuous packs; profit = price - material cost - variable cost; grains, meat, Meaties capacity"


def build(workspace: Path) -> dict:
    v = parameters(workspace)
    rows = {r["Product"]: r for r in table(workspace, "table_1")}
    x = {p: pulp.LpVariable(p, lowBound=0, upBound=cell(r, "Production_capacity")) for p, r in rows.items()}
    unit = {
        p: float(r["Price_per_pack"])
        - float(r["Grains_per_pack"]) * number(v, "price_per_lb_grains")
        - float(r["Meat_per_pack"]) * number(v, "price_per_lb_meat")
        - float(r["Variable_cost_per_pack"])
        for p, r in rows.items()
    }
    prob = pulp.LpProblem("item86", pulp.LpMaximize)
    prob += pulp.lpSum(unit[p] * x[p] for p in rows)
    prob += pulp.lpSum(float(r["Grains_per_pack"]) * x[p] for p, r in rows.items()) <= number(v, "max_grains")
    prob += pulp.lpSum(float(r["Meat_per_pack"]) * x[p] for p, r in rows.items()) <= number(v, "max_meat")
    return solve(prob)


if __name__ == "__main__":
    main(build)
