"""Item 67: monthly production of I and II from July to December (the June-December unit costs),
both together within the monthly capacity; each month's demand met from production and stock
(no backlog), starting July with the initial inventory; the volume held at a month's end is stored
in the factory's warehouse up to its capacity (own cost per m3 per month) and in rented space
beyond it (external cost); minimise production plus storage cost."""

from pathlib import Path

import pulp

from tcsexam.orspace.refmodel import main, number, parameters, solve, table

READING = "July-December, June-December costs, combined capacity, demand met each month, own then rented storage"
MONTHS = ("July", "August", "September", "October", "November", "December")
PRODUCTS = ("I", "II")


def build(workspace: Path) -> dict:
    v = parameters(workspace)
    demand = {
        (r["Product"].removeprefix("Product_"), r["Month"]): float(r["Market_Demand_Units"])
        for r in table(workspace, "table_1")
    }
    make = {(p, m): pulp.LpVariable(f"make_{p}_{m}", lowBound=0) for p in PRODUCTS for m in MONTHS}
    held = {(p, m): pulp.LpVariable(f"held_{p}_{m}", lowBound=0) for p in PRODUCTS for m in MONTHS}
    own = {m: pulp.LpVariable(f"own_{m}", lowBound=0, upBound=number(v, "warehouse_capacity")) for m in MONTHS}
    rented = {m: pulp.LpVariable(f"rented_{m}", lowBound=0) for m in MONTHS}
    prob = pulp.LpProblem("item67", pulp.LpMinimize)
    prob += pulp.lpSum(
        number(v, f"product_{p}_cost_jun_to_dec") * make[p, m] for p in PRODUCTS for m in MONTHS
    ) + pulp.lpSum(
        number(v, "own_warehouse_cost") * own[m] + number(v, "external_warehouse_cost") * rented[m] for m in MONTHS
    )
    for i, m in enumerate(MONTHS):
        prob += pulp.lpSum(make[p, m] for p in PRODUCTS) <= number(v, "max_production_capacity")
        prob += own[m] + rented[m] == pulp.lpSum(number(v, f"product_{p}_volume") * held[p, m] for p in PRODUCTS)
        for p in PRODUCTS:
            before = held[p, MONTHS[i - 1]] if i else number(v, "initial_inventory_july")
            prob += held[p, m] == before + make[p, m] - demand[p, m]
    return solve(prob)


if __name__ == "__main__":
    main(build)
