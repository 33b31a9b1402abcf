"""Item 50: each month the store buys at the start (stock plus purchase within the warehouse
capacity), then sells at most what it holds; the end-of-June stock is available in July; maximise
sales revenue minus purchase cost."""

from pathlib import Path

import pulp

from tcsexam.orspace.refmodel import main, number, parameters, solve, table

READING = "buy at the start of a month within capacity, then sell from stock plus purchase"


def build(workspace: Path) -> dict:
    v = parameters(workspace)
    rows = table(workspace, "table_1")
    months = range(len(rows))
    buy = [pulp.LpVariable(f"buy_{t}", lowBound=0) for t in months]
    sell = [pulp.LpVariable(f"sell_{t}", lowBound=0) for t in months]
    stock = [pulp.LpVariable(f"stock_{t}", lowBound=0) for t in months]
    prob = pulp.LpProblem("item50", pulp.LpMaximize)
    prob += pulp.lpSum(float(r["Sell"]) * sell[t] - float(r["Buy"]) * buy[t] for t, r in enumerate(rows))
    for t in months:
        before = stock[t - 1] if t else number(v, "initial_stock")
        prob += before + buy[t] <= number(v, "warehouse_capacity")
        prob += stock[t] == before + buy[t] - sell[t]
    return solve(prob)


if __name__ == "__main__":
    main(build)
