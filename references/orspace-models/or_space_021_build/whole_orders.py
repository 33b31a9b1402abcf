"""Item 21: whole orders from suppliers A, B, C (each order a fixed number of tables, each table
at the supplier's price); between the minimum and maximum number of tables; ordering from A needs
at least the given number of tables from B; ordering from B needs an order from C; minimise cost."""

from pathlib import Path

import pulp

from tcsexam.orspace.refmodel import main, number, parameters, solve

READING = "whole orders of fixed size; tables within min/max; A needs >= 30 tables from B; B needs C"
SUPPLIERS = ("a", "b", "c")


def build(workspace: Path) -> dict:
    v = parameters(workspace)
    size = {s: number(v, f"order_size_supplier_{s}") for s in SUPPLIERS}
    most = number(v, "max_tables_allowed")
    orders = {s: pulp.LpVariable(f"orders_{s}", lowBound=0, cat="Integer") for s in SUPPLIERS}
    used = {s: pulp.LpVariable(f"used_{s}", cat="Binary") for s in SUPPLIERS}
    tables = {s: size[s] * orders[s] for s in SUPPLIERS}
    prob = pulp.LpProblem("item21", pulp.LpMinimize)
    prob += pulp.lpSum(number(v, f"cost_supplier_{s}") * tables[s] for s in SUPPLIERS)
    prob += pulp.lpSum(tables.values()) >= number(v, "min_tables_required")
    prob += pulp.lpSum(tables.values()) <= most
    for s in SUPPLIERS:
        prob += tables[s] <= most * used[s]
        prob += orders[s] >= used[s]
    prob += tables["b"] >= number(v, "min_tables_supplier_b_if_a") * used["a"]
    prob += used["c"] >= used["b"]
    return solve(prob)


if __name__ == "__main__":
    main(build)
