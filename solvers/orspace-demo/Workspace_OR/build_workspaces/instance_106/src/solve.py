"""Warehouse opening by exhaustive search over shipment plans in 10-unit steps: correct in
principle, but it never finishes inside any reasonable time limit."""

import csv
import itertools

sites = {r["Warehouse"]: r for r in csv.DictReader(open("../data/table_1.csv"))}
cost = {r["Warehouse"]: r for r in csv.DictReader(open("../data/table_2.csv"))}
demand = {r["Customer"]: int(r["Demand"]) for r in csv.DictReader(open("../data/table_3.csv"))}
best = None
splits = {
    c: [p for p in itertools.product(range(0, d + 1, 10), repeat=len(sites)) if sum(p) >= d] for c, d in demand.items()
}
for plan in itertools.product(*splits.values()):
    load = [sum(plan[j][i] for j in range(len(demand))) for i in range(len(sites))]
    if any(l > float(s["Capacity"]) for l, s in zip(load, sites.values())):
        continue
    total = sum(float(s["Fixed_Cost"]) for l, s in zip(load, sites.values()) if l > 0)
    total += sum(float(cost[w][c]) * plan[j][i] for j, c in enumerate(demand) for i, w in enumerate(sites))
    best = total if best is None else min(best, total)
print("Status: Optimal")
print(f"OBJECTIVE_VALUE: {best}")
