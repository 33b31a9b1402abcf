"""Item 59: kilograms of each raw material in each brand of candy; the table's percentages bound a
raw material's share of a brand (`>=60%`: at least, `<=20%`: at most, blank: free); raw
materials within their monthly limits; profit = (selling price - processing fee) x candy made -
raw material cost; maximise it."""

import re
from pathlib import Path

import pulp

from tcsexam.orspace.refmodel import main, solve, table

READING = "blending: share bounds per raw material and brand, monthly limits, profit = price - fee - material"
_SHARE = re.compile(r"^(>=|<=)\s*([\d.]+)\s*%$")


def build(workspace: Path) -> dict:
    rows = table(workspace, "table_1_7")
    brands = [c for c in rows[0] if len(c) == 1]
    materials = {r["Item"]: r for r in rows if r["Raw Material Cost (Yuan/kg)"]}
    fee = next(r for r in rows if r["Item"].startswith("Processing Fee"))
    price = next(r for r in rows if r["Item"].startswith("Selling Price"))
    x = {(m, b): pulp.LpVariable(f"x_{m}_{b}", lowBound=0) for m in materials for b in brands}
    made = {b: pulp.lpSum(x[m, b] for m in materials) for b in brands}
    prob = pulp.LpProblem("item59", pulp.LpMaximize)
    prob += pulp.lpSum((float(price[b]) - float(fee[b])) * made[b] for b in brands) - pulp.lpSum(
        float(r["Raw Material Cost (Yuan/kg)"]) * x[m, b] for m, r in materials.items() for b in brands
    )
    for m, r in materials.items():
        prob += pulp.lpSum(x[m, b] for b in brands) <= float(r["Monthly Limit (kg)"])
        for b in brands:
            bound = _SHARE.match(r[b].replace(" ", "")) if r[b] else None
            if bound:
                share = float(bound.group(2)) / 100
                prob += (x[m, b] >= share * made[b]) if bound.group(1) == ">=" else (x[m, b] <= share * made[b])
    return solve(prob)


if __name__ == "__main__":
    main(build)
