"""Item 27's model, shared by its readings. `table_1` gives the hours a unit of each product takes
on each machine (a blank cell: the machine cannot process it), each machine's effective hours and
its operating cost at full capacity. Every product passes stage A (A1, A2) and stage B (B1-B3) on a
machine able to process it; machine hours within the effective hours; a machine's cost is
proportional to its use (full-capacity cost / effective hours per hour used); maximise sales minus
raw material minus machine costs."""

from pathlib import Path

from tcsexam.orspace.refmodel import number, parameters, routed_production, table

PRODUCTS = ("I", "II", "III")


def build(workspace: Path, integer: bool) -> dict:
    v = parameters(workspace)
    rows = table(workspace, "table_1")
    hours = {(p, r["Equipment"]): float(r[f"Product_{p}"]) for r in rows for p in PRODUCTS if r[f"Product_{p}"]}
    capacity = {r["Equipment"]: float(r["Effective_Machine_Hours"]) for r in rows}
    rate = {r["Equipment"]: float(r["Operating_Costs_Full_Capacity_Yuan"]) / capacity[r["Equipment"]] for r in rows}
    stages = {s: [m for m in capacity if m.startswith(s)] for s in "AB"}
    margin = {p: number(v, f"unit_price_product_{p}") - number(v, f"raw_material_cost_product_{p}") for p in PRODUCTS}
    return routed_production(hours, stages, capacity, rate, margin, integer)
