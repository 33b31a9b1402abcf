"""Item 7's transport model, shared by its readings: containers from warehouses (at most their
stock) to ports (exactly their demand), by trucks carrying at most `truck_capacity` containers;
the cost per km is paid `per` "truck" (whole trucks per route) or "container"."""

from pathlib import Path

import pulp

from tcsexam.orspace.refmodel import number, parameters, solve, table


def build(workspace: Path, per: str) -> dict:
    v = parameters(workspace)
    stock = {r["Warehouse"]: float(r["Empty_Containers"]) for r in table(workspace, "table_1")}
    demand = {r["Port"]: float(r["Container_Demand"]) for r in table(workspace, "table_2")}
    dist = {(r["Warehouse"], p): float(r[p]) for r in table(workspace, "table_3") for p in demand}
    cap, rate = number(v, "truck_capacity"), number(v, "cost_per_km")
    x = {k: pulp.LpVariable(f"x_{k[0]}_{k[1]}", lowBound=0, cat="Integer") for k in dist}
    trucks = {k: pulp.LpVariable(f"t_{k[0]}_{k[1]}", lowBound=0, cat="Integer") for k in dist}
    prob = pulp.LpProblem("item7", pulp.LpMinimize)
    carried = trucks if per == "truck" else x
    prob += pulp.lpSum(rate * dist[k] * carried[k] for k in dist)
    for k in dist:
        prob += x[k] <= cap * trucks[k]
    for w, s in stock.items():
        prob += pulp.lpSum(x[w, p] for p in demand) <= s
    for p, d in demand.items():
        prob += pulp.lpSum(x[w, p] for w in stock) == d
    return solve(prob)
