"""Item 85: batches of X and Y (fractional allowed, as the docs say); machine and craftsman minutes
within the hours available; time used is paid at its hourly cost, idle time costs nothing; X at
least its contract minimum; maximise revenue minus the cost of the time used."""

from pathlib import Path

import pulp

from tcsexam.orspace.refmodel import main, number, parameters, solve, table

READING = "fractional batches, revenue minus machine and craftsman time used at hourly cost, X minimum"
RESOURCES = {"machine": "Machine_Time_minutes", "craftsman": "Craftsman_Time_minutes"}


def build(workspace: Path) -> dict:
    v = parameters(workspace)
    rows = {r["Item"]: r for r in table(workspace, "table_1")}
    x = {p: pulp.LpVariable(p, lowBound=0) for p in rows}
    minutes = {k: pulp.lpSum(float(rows[p][col]) * x[p] for p in rows) for k, col in RESOURCES.items()}
    prob = pulp.LpProblem("item85", pulp.LpMaximize)
    prob += pulp.lpSum(number(v, f"revenue_product_{p}") * x[p] for p in rows) - pulp.lpSum(
        number(v, f"{k}_time_cost") * minutes[k] / 60 for k in RESOURCES
    )
    for k in RESOURCES:
        prob += minutes[k] <= 60 * number(v, f"{k}_time_available")
    prob += x["X"] >= number(v, "min_batches_product_X")
    return solve(prob)


if __name__ == "__main__":
    main(build)
