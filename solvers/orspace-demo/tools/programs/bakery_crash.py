"""Bakery mix with PuLP; reads a column name that the data does not have and crashes."""

import csv

import pulp

rows = list(csv.DictReader(open("../data/table_1.csv")))
prob = pulp.LpProblem("bakery", pulp.LpMaximize)
x = {r["Product"]: pulp.LpVariable(f"x_{r['Product']}", 0, float(r["Max_Demand"])) for r in rows}
prob += pulp.lpSum(float(r["Profit_Per_Batch"]) * x[r["Product"]] for r in rows)  # KeyError: Profit_per_Batch
prob.solve(pulp.PULP_CBC_CMD(msg=0))
print(f"OBJECTIVE_VALUE: {pulp.value(prob.objective)}")
