"""Legacy heuristic: fill the oven with the most profitable product per oven hour first."""

import csv

params = {r["Parameter_Name"]: float(r["Value"]) for r in csv.DictReader(open("../data/general_parameters.csv"))}
rows = list(csv.DictReader(open("../data/table_1.csv")))
oven, labour, profit = params["oven_hours_available"], params["labour_hours_available"], 0.0
for r in sorted(rows, key=lambda r: -float(r["Profit_per_Batch"]) / float(r["Oven_Hours_per_Batch"])):
    q = min(
        float(r["Max_Demand"]), oven / float(r["Oven_Hours_per_Batch"]), labour / float(r["Labour_Hours_per_Batch"])
    )
    oven -= q * float(r["Oven_Hours_per_Batch"])
    labour -= q * float(r["Labour_Hours_per_Batch"])
    profit += q * float(r["Profit_per_Batch"])
print(f"OBJECTIVE_VALUE: {profit}")
