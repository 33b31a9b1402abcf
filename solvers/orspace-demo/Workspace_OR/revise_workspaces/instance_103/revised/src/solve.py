"""Revised shift balancing as a MIP with PuLP/CBC, stopped after one branch-and-bound node (a node
limit, not a time limit, so the outcome is the same on any machine at any load). It reports PuLP's
LpStatus, which says Optimal even when CBC stopped on the limit; the result file also carries
prob.sol_status (2 = a solution found, optimality not proven), so the harness can tell."""

import csv
import json
import os

import pulp

params = {r["Parameter_Name"]: float(r["Value"]) for r in csv.DictReader(open("../data/general_parameters.csv"))}
jobs = list(csv.DictReader(open("../data/table_1.csv")))
res = ["press", "cutter", "binder"]
prob = pulp.LpProblem("shift_balance", pulp.LpMinimize)
day = {j["Job"]: pulp.LpVariable(f"day_{j['Job']}", cat="Binary") for j in jobs}
over = {r: pulp.LpVariable(f"over_{r}", 0) for r in res}
under = {r: pulp.LpVariable(f"under_{r}", 0) for r in res}
prob += pulp.lpSum(over.values()) + pulp.lpSum(under.values())
for r in res:
    prob += (
        pulp.lpSum(float(j[r]) * day[j["Job"]] for j in jobs) - over[r] + under[r] == params[f"day_target_{r}"],
        f"target_{r}",
    )
prob.solve(pulp.PULP_CBC_CMD(msg=0, maxNodes=1))
print(f"Status: {pulp.LpStatus[prob.status]}")
print(f"OBJECTIVE_VALUE: {pulp.value(prob.objective)}")
with open(os.environ.get("ORSPACE_RESULT_FILE", "result.json"), "w") as fh:
    json.dump(
        {"status": pulp.LpStatus[prob.status], "objective": pulp.value(prob.objective), "sol_status": prob.sol_status},
        fh,
    )
