"""Item 79: whole numbers of tables, chairs and bookshelves; profit = price - manufacturing cost;
warehouse space within the maximum; tables and bookshelves at least their minima; total items at
most the maximum; maximise profit."""

from pathlib import Path

import pulp

from tcsexam.orspace.refmodel import main, number, parameters, solve

READING = "whole items; profit = price - cost; space, minima and total-items limits"
ITEMS = ("table", "chair", "bookshelf")


def build(workspace: Path) -> dict:
    v = parameters(workspace)
    x = {i: pulp.LpVariable(i, lowBound=0, cat="Integer") for i in ITEMS}
    prob = pulp.LpProblem("item79", pulp.LpMaximize)
    prob += pulp.lpSum((number(v, f"sell_price_{i}") - number(v, f"manufacturing_cost_{i}")) * x[i] for i in ITEMS)
    prob += pulp.lpSum(number(v, f"warehouse_space_{i}") * x[i] for i in ITEMS) <= number(v, "max_warehouse_space")
    prob += x["table"] >= number(v, "min_tables")
    prob += x["bookshelf"] >= number(v, "min_bookshelves")
    prob += pulp.lpSum(x.values()) <= number(v, "max_total_items")
    return solve(prob)


if __name__ == "__main__":
    main(build)
