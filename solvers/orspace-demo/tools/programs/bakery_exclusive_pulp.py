"""Revised bakery mix (Baguette xor Muffin) as a MIP with PuLP/CBC; release-style output lines."""

import csv

import pulp

params = {r["Parameter_Name"]: float(r["Value"]) for r in csv.DictReader(open("../data/general_parameters.csv"))}
rows = {r["Product"]: r for r in csv.DictReader(open("../data/table_1.csv"))}
prob = pulp.LpProblem("bakery_exclusive", pulp.LpMaximize)
x = {p: pulp.LpVariable(f"x_{p}", 0, float(r["Max_Demand"])) for p, r in rows.items()}
y = pulp.LpVariable("bake_baguette", cat="Binary")
prob += pulp.lpSum(float(r["Profit_per_Batch"]) * x[p] for p, r in rows.items())
prob += (
    pulp.lpSum(float(r["Oven_Hours_per_Batch"]) * x[p] for p, r in rows.items()) <= params["oven_hours_available"],
    "oven",
)
prob += (
    pulp.lpSum(float(r["Labour_Hours_per_Batch"]) * x[p] for p, r in rows.items()) <= params["labour_hours_available"],
    "labour",
)
prob += x["Baguette"] <= float(rows["Baguette"]["Max_Demand"]) * y, "excl_baguette"
prob += x["Muffin"] <= float(rows["Muffin"]["Max_Demand"]) * (1 - y), "excl_muffin"
prob.solve(pulp.PULP_CBC_CMD(msg=0))
proven = pulp.LpStatus[prob.status] == "Optimal" and prob.sol_status == pulp.LpSolutionOptimal
print(f"Status: {'Optimal' if proven else 'Not Optimal'}")
print(f"OBJECTIVE_VALUE: {pulp.value(prob.objective)}")
