"""Item 65 (probe): the docs list constraints (inspection and sales cost within its limit, at least
the minimum sales of each product, workshop A's overtime within its limit) but state no objective.
This probe assumes one: minimise the cost of the workshop hours used (hours times each workshop's
hourly cost); workshop A's hours within its available hours plus the overtime limit, workshop B's
not limited (the data give no overtime limit for B); whole units. The objective is an assumption,
so the model is a probe, not evidence."""

from pathlib import Path

import pulp

from tcsexam.orspace.refmodel import main, number, parameters, solve, table

READING = "assumed objective: least workshop-hour cost; sales minima, inspection cost limit, A's overtime limit"
EVIDENCE = False
NAMES = {"Microwave_Oven": "microwave", "Water_Heater": "water_heater"}


def build(workspace: Path) -> dict:
    v = parameters(workspace)
    rows = {NAMES[r["Product"]]: r for r in table(workspace, "table_1")}
    x = {p: pulp.LpVariable(p, lowBound=number(v, f"{p}_minimum_sales"), cat="Integer") for p in rows}
    hours = {w: pulp.lpSum(float(rows[p][f"Workshop_{w}_Hours"]) * x[p] for p in rows) for w in "AB"}
    prob = pulp.LpProblem("item65", pulp.LpMinimize)
    prob += pulp.lpSum(number(v, f"workshop_{w.lower()}_hourly_cost") * hours[w] for w in "AB")
    prob += pulp.lpSum(float(rows[p]["Inspection_Sales_Cost"]) * x[p] for p in rows) <= number(
        v, "inspection_sales_cost_limit"
    )
    prob += hours["A"] <= number(v, "workshop_a_available_hours") + number(v, "workshop_a_overtime_limit")
    return solve(prob)


if __name__ == "__main__":
    main(build)
