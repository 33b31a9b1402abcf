"""Item 62: buy each restaurant at most once within the budget; if restaurant D is bought,
restaurant A is not; maximise the annual income."""

from pathlib import Path

import pulp

from tcsexam.orspace.refmodel import main, number, parameters, solve, table

COLUMNS = ("Restaurant", "Annual_Revenue", "investment_budget", "Restaurant_D", "Restaurant_A")
READING = "0/1 choice of each restaurant within the budget; restaurant D excludes restaurant A; maximise annual income"


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
