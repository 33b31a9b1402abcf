"""Item 73's model, shared by its readings: choose the children to take, between the minimum and
the maximum number, Bob always, Alice and Diana not both, Bob and Charlie not both, Charlie only with
Diana, Diana only with Ella; minimise the total cost. The docs state these four rules; `table_1`
also says Ella "Must be taken with Diana", which the docs do not: `ella_needs_diana` adds it."""

from pathlib import Path

import pulp

from tcsexam.orspace.refmodel import number, parameters, solve, table


def build(workspace: Path, ella_needs_diana: bool) -> dict:
    v = parameters(workspace)
    cost = {r["Child"]: float(r["Cost"]) for r in table(workspace, "table_1")}
    x = {c: pulp.LpVariable(c, cat="Binary") for c in cost}
    prob = pulp.LpProblem("item73", pulp.LpMinimize)
    prob += pulp.lpSum(cost[c] * x[c] for c in cost)
    prob += pulp.lpSum(x.values()) <= number(v, "max_children_trip")
    prob += pulp.lpSum(x.values()) >= number(v, "min_children_trip")
    prob += x["Bob"] == 1
    prob += x["Alice"] + x["Diana"] <= 1
    prob += x["Bob"] + x["Charlie"] <= 1
    prob += x["Charlie"] <= x["Diana"]
    prob += x["Diana"] <= x["Ella"]
    if ella_needs_diana:
        prob += x["Ella"] <= x["Diana"]
    return solve(prob)
