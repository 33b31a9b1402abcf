"""Warehouse opening (capacitated facility location MIP) with PuLP/CBC; release-style output."""

import csv

import pulp

params = {r["Parameter_Name"]: float(r["Value"]) for r in csv.DictReader(open("../data/general_parameters.csv"))}
sites = {r["Warehouse"]: r for r in csv.DictReader(open("../data/table_1.csv"))}
cost = {r["Warehouse"]: r for r in csv.DictReader(open("../data/table_2.csv"))}
demand = {r["Customer"]: float(r["Demand"]) for r in csv.DictReader(open("../data/table_3.csv"))}
mult = params.get("transport_cost_multiplier", 1.0)
prob = pulp.LpProblem("facility", pulp.LpMinimize)
open_ = {w: pulp.LpVariable(f"open_{w}", cat="Binary") for w in sites}
ship = {(w, c): pulp.LpVariable(f"ship_{w}_{c}", 0) for w in sites for c in demand}
prob += pulp.lpSum(float(sites[w]["Fixed_Cost"]) * open_[w] for w in sites) + pulp.lpSum(
    mult * float(cost[w][c]) * ship[w, c] for w, c in ship
)
for c, d in demand.items():
    prob += pulp.lpSum(ship[w, c] for w in sites) >= d, f"demand_{c}"
for w in sites:
    prob += pulp.lpSum(ship[w, c] for c in demand) <= float(sites[w]["Capacity"]) * open_[w], f"capacity_{w}"
prob.solve(pulp.PULP_CBC_CMD(msg=0))
proven = pulp.LpStatus[prob.status] == "Optimal" and prob.sol_status == pulp.LpSolutionOptimal
print(f"Status: {'Optimal' if proven else pulp.LpStatus[prob.status]}")
print(f"OBJECTIVE_VALUE: {pulp.value(prob.objective)}")
