"""Item 53: choose which children to take; between the minimum and the maximum number; Ginny always;
Harry excludes Fred and George; George needs Fred and Hermione; minimise the total cost."""

from pathlib import Path

import pulp

from tcsexam.orspace.refmodel import main, number, parameters, solve, table

READING = "Ginny always, 3 to 4 children, the four pair rules of general_parameters, minimise cost"


def build(workspace: Path) -> dict:
    v = parameters(workspace)
    cost = {r["Child"].lower(): float(r["Cost"]) for r in table(workspace, "table_1")}
    x = {c: pulp.LpVariable(c, cat="Binary") for c in cost}
    prob = pulp.LpProblem("item53", pulp.LpMinimize)
    prob += pulp.lpSum(cost[c] * x[c] for c in cost)
    prob += pulp.lpSum(x.values()) <= number(v, "max_children")
    prob += pulp.lpSum(x.values()) >= number(v, "min_children")
    if number(v, "mandatory_ginny"):
        prob += x["ginny"] == 1
    if number(v, "harry_no_fred"):
        prob += x["harry"] + x["fred"] <= 1
    if number(v, "harry_no_george"):
        prob += x["harry"] + x["george"] <= 1
    if number(v, "george_requires_fred"):
        prob += x["george"] <= x["fred"]
    if number(v, "george_requires_hermione"):
        prob += x["george"] <= x["hermione"]
    return solve(prob)


if __name__ == "__main__":
    main(build)
