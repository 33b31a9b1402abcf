"""Legacy heuristic: put jobs on the day shift, largest first, while no resource exceeds its target;
reports the remaining total deviation."""

import csv

params = {r["Parameter_Name"]: float(r["Value"]) for r in csv.DictReader(open("../data/general_parameters.csv"))}
jobs = list(csv.DictReader(open("../data/table_1.csv")))
res = ["press", "cutter", "binder"]
load = {r: 0.0 for r in res}
for j in sorted(jobs, key=lambda j: -sum(float(j[r]) for r in res)):
    if all(load[r] + float(j[r]) <= params[f"day_target_{r}"] for r in res):
        for r in res:
            load[r] += float(j[r])
print(f"OBJECTIVE_VALUE: {sum(abs(params[f'day_target_{r}'] - load[r]) for r in res)}")
