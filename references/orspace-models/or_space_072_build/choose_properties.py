"""Item 72: buy each property at most once within the budget; if property 4 is bought,
property 3 is not; maximise the annual income."""

from pathlib import Path

import pulp

from tcsexam.orspace.refmodel import main, number, parameters, solve, table

COLUMNS = ("Property", "Annual_Income", "budget", "Property_4", "Property_3")
READING = "0/1 choice of each property within the budget; property 4 excludes property 3; maximise annual income"


def build(workspace: Path) -> dict:
    key, income, budget, first, second = COLUMNS
    v = parameters(workspace)
    rows = {r[key]: r for r in table(workspace, "table_1")}
    y = {k: pulp.LpVariable(f"y_{k}", cat="Binary") for k in rows}
    prob = pulp.LpProblem("knapsack", pulp.LpMaximize)
    prob += pulp.lpSum(float(r[income]) * y[k] for k, r in rows.items())
    prob += pulp.lpSum(float(r["Cost"]) * y[k] for k, r in rows.items()) <= number(v, budget)
    prob += y[first] + y[second] <= 1
    return solve(prob)


if __name__ == "__main__":
    main(build)
