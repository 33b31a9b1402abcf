"""Item 95: weekly production within capacity, each week's demand met from production plus stock,
storage cost per thousand boxes held at the end of a week; minimise production plus storage cost
(the table's Total row is a sum, not a week)."""

from pathlib import Path

import pulp

from tcsexam.orspace.refmodel import main, number, parameters, solve, table

READING = "production within capacity, demand met each week, end-of-week stock pays the storage cost"


def build(workspace: Path) -> dict:
    v = parameters(workspace)
    rows = [r for r in table(workspace, "table_1") if r["Week"].strip().lower() != "total"]
    weeks = range(len(rows))
    make = [
        pulp.LpVariable(f"make_{t}", lowBound=0, upBound=float(r["Production_Capacity_1000_boxes"]))
        for t, r in enumerate(rows)
    ]
    stock = [pulp.LpVariable(f"stock_{t}", lowBound=0) for t in weeks]
    prob = pulp.LpProblem("item95", pulp.LpMinimize)
    prob += pulp.lpSum(float(r["Cost_per_1000_boxes_1000_yuan"]) * make[t] for t, r in enumerate(rows)) + number(
        v, "storage_cost_per_thousand_boxes"
    ) * pulp.lpSum(stock)
    for t, r in enumerate(rows):
        prob += (stock[t - 1] if t else 0) + make[t] - float(r["Demand_1000_boxes"]) == stock[t]
    return solve(prob)


if __name__ == "__main__":
    main(build)
