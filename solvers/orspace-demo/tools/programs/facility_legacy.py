"""Legacy heuristic: open the cheapest warehouses per unit of capacity until demand is covered,
then ship greedily along the cheapest routes."""

import csv

sites = {r["Warehouse"]: r for r in csv.DictReader(open("../data/table_1.csv"))}
cost = {r["Warehouse"]: r for r in csv.DictReader(open("../data/table_2.csv"))}
demand = {r["Customer"]: float(r["Demand"]) for r in csv.DictReader(open("../data/table_3.csv"))}
need = sum(demand.values())
opened, cap = [], 0.0
for w in sorted(sites, key=lambda w: float(sites[w]["Fixed_Cost"]) / float(sites[w]["Capacity"])):
    if cap >= need:
        break
    opened.append(w)
    cap += float(sites[w]["Capacity"])
left = {w: float(sites[w]["Capacity"]) for w in opened}
total = sum(float(sites[w]["Fixed_Cost"]) for w in opened)
for c, d in demand.items():
    for w in sorted(opened, key=lambda w: float(cost[w][c])):
        q = min(d, left[w])
        d -= q
        left[w] -= q
        total += q * float(cost[w][c])
print(f"OBJECTIVE_VALUE: {total}")
