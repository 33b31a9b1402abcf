"""Item 32: each workshop splits its hours among the three components (at its rates per hour); a
product needs one of each component; maximise the number of complete products (continuous)."""

from pathlib import Path

import pulp

from tcsexam.orspace.refmodel import main, solve, table

READING = "hours split among components within each workshop's capacity; products = the scarcest component (continuous)"


def build(workspace: Path) -> dict:
    rows = table(workspace, "table_1")
    parts = [c for c in rows[0] if c.startswith("Production_Rate_Component_")]
    hours = {
        (r["Workshop"], c): pulp.LpVariable(f"h_{r['Workshop']}_{k}", lowBound=0)
        for r in rows
        for k, c in enumerate(parts)
    }
    products = pulp.LpVariable("products", lowBound=0)
    prob = pulp.LpProblem("item32", pulp.LpMaximize)
    prob += products
    for r in rows:
        prob += pulp.lpSum(hours[r["Workshop"], c] for c in parts) <= float(r["Production_Capacity_hours"])
    for c in parts:
        prob += pulp.lpSum(float(r[c]) * hours[r["Workshop"], c] for r in rows) >= products
    return solve(prob)


if __name__ == "__main__":
    main(build)
