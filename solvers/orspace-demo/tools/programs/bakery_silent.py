"""Bakery mix with PuLP; solves the right model but reports neither status nor objective."""

import csv

import pulp

params = {r["Parameter_Name"]: float(r["Value"]) for r in csv.DictReader(open("../data/general_parameters.csv"))}
rows = list(csv.DictReader(open("../data/table_1.csv")))
prob = pulp.LpProblem("bakery", pulp.LpMaximize)
x = {r["Product"]: pulp.LpVariable(f"x_{r['Product']}", 0, float(r["Max_Demand"])) for r in rows}
prob += pulp.lpSum(float(r["Profit_per_Batch"]) * x[r["Product"]] for r in rows)
prob += pulp.lpSum(float(r["Oven_Hours_per_Batch"]) * x[r["Product"]] for r in rows) <= params["oven_hours_available"]
prob += (
    pulp.lpSum(float(r["Labour_Hours_per_Batch"]) * x[r["Product"]] for r in rows) <= params["labour_hours_available"]
)
prob.solve(pulp.PULP_CBC_CMD(msg=0))
for name, var in x.items():
    print(name, var.value())
