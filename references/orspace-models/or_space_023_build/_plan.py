"""Item 23's model, shared by its readings: whole units of three products within the week's labour
and material; profit = (price - variable cost) x units minus the weekly fixed costs of the
equipment. `fixed_always`: every fixed cost is paid; otherwise only for equipment in use."""

from pathlib import Path

import pulp

from tcsexam.orspace.refmodel import number, parameters, solve, table

FIXED = {
    "Shirt": "fixed_cost_shirts",
    "Short-sleeve": "fixed_cost_short_sleeves",
    "Casual Cloth": "fixed_cost_casual_clothes",
}


def build(workspace: Path, fixed_always: bool) -> dict:
    values = parameters(workspace)
    rows = {r["Product Name"]: r for r in table(workspace, "table_1")}
    prob = pulp.LpProblem("item23", pulp.LpMaximize)
    x = {p: pulp.LpVariable(f"x_{i}", lowBound=0, cat="Integer") for i, p in enumerate(rows)}
    y = {p: pulp.LpVariable(f"y_{i}", cat="Binary") for i, p in enumerate(rows)}
    big = {p: number(values, "available_labor") / float(r["Labor per unit"]) for p, r in rows.items()}
    margin = pulp.lpSum((float(r["Selling Price"]) - float(r["Variable Cost"])) * x[p] for p, r in rows.items())
    if fixed_always:
        prob += margin - sum(number(values, FIXED[p]) for p in rows)
    else:
        prob += margin - pulp.lpSum(number(values, FIXED[p]) * y[p] for p in rows)
        for p in rows:
            prob += x[p] <= big[p] * y[p]
    prob += pulp.lpSum(float(r["Labor per unit"]) * x[p] for p, r in rows.items()) <= number(values, "available_labor")
    prob += pulp.lpSum(float(r["Material per unit"]) * x[p] for p, r in rows.items()) <= number(
        values, "available_material"
    )
    return solve(prob)
