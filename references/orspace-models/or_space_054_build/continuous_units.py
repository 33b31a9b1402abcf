"""Item 54: products I, II, III within each machine's effective monthly hours (table_1: hours per
unit on A, B, C and the last row's unit profits); maximise profit."""

from pathlib import Path

import pulp

from tcsexam.orspace.refmodel import main, solve, table

READING = "continuous quantities; hours on equipment A, B, C within their effective hours"
PRODUCTS = ("I", "II", "III")


def build(workspace: Path) -> dict:
    rows = table(workspace, "table_1")
    profit_row = next(r for r in rows if r["Equipment_Code"].startswith("Unit_Product_Profit"))
    machines = [r for r in rows if r is not profit_row]
    x = {p: pulp.LpVariable(p, lowBound=0) for p in PRODUCTS}
    prob = pulp.LpProblem("item54", pulp.LpMaximize)
    prob += pulp.lpSum(float(profit_row[p]) * x[p] for p in PRODUCTS)
    for m in machines:
        prob += pulp.lpSum(float(m[p]) * x[p] for p in PRODUCTS) <= float(m["Effective_Monthly_Equipment_Hours"])
    return solve(prob)


if __name__ == "__main__":
    main(build)
