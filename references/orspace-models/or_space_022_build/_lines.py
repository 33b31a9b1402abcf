"""Item 22's fixed-charge model, shared by its readings: product i sells at most its demand, is
made at its daily production quota, and the products share the month's operating days; profit =
(price - cost) x quantity minus the activation cost of every active line; an active line makes at
least its minimum batch. `all_active`: every line must run (its activation cost always paid)."""

from pathlib import Path

import pulp

from tcsexam.orspace.refmodel import number, parameters, solve, table


def build(workspace: Path, all_active: bool) -> dict:
    values = parameters(workspace)
    rows = {r["Product"]: r for r in table(workspace, "table_1")}
    activation = {r["Product"]: float(r["Activation_Cost"]) for r in table(workspace, "table_2")}
    batch = {r["Product"]: float(r["Minimum_Batch"]) for r in table(workspace, "table_3")}
    days = number(values, "production_days")
    prob = pulp.LpProblem("item22", pulp.LpMaximize)
    x = {p: pulp.LpVariable(f"x_{p}", lowBound=0) for p in rows}
    y = {p: pulp.LpVariable(f"y_{p}", cat="Binary") for p in rows}
    prob += pulp.lpSum(
        (float(r["Selling_Price"]) - float(r["Production_Cost"])) * x[p] - activation[p] * y[p] for p, r in rows.items()
    )
    prob += pulp.lpSum(x[p] / float(r["Production_Quota"]) for p, r in rows.items()) <= days
    for p, r in rows.items():
        prob += x[p] <= float(r["Maximum_Demand"]) * y[p]
        prob += x[p] >= batch[p] * y[p]
        if all_active:
            prob += y[p] == 1
    return solve(prob)
