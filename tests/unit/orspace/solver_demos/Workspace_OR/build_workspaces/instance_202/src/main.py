"""Workshop plan (integer programme) with COPT (coptpy); writes the structured result file."""

import csv
import json
import os

import coptpy as cp

INTEGER = True  # whole products (the model of the brief)
params = {r["Parameter_Name"]: float(r["Value"]) for r in csv.DictReader(open("../data/general_parameters.csv"))}
rows = list(csv.DictReader(open("../data/table_1.csv")))
DEMAND = 0  # products at least (the tests' infeasible variant asks more than the hours allow)
CAPACITY = True  # the capacity rows (the tests' unbounded variant forgets them)

SOLVER = "copt"
env = cp.Envr()
m = env.createModel("workshop")
vtype = cp.COPT.INTEGER if INTEGER else cp.COPT.CONTINUOUS
x = {r["Product"]: m.addVar(vtype=vtype, name=r["Product"]) for r in rows}
m.setObjective(cp.quicksum(float(r["Profit"]) * x[r["Product"]] for r in rows), cp.COPT.MAXIMIZE)
if CAPACITY:
    m.addConstr(cp.quicksum(float(r["Assembly_Hours"]) * x[r["Product"]] for r in rows) <= params["assembly_hours"])
    m.addConstr(cp.quicksum(float(r["Finishing_Hours"]) * x[r["Product"]] for r in rows) <= params["finishing_hours"])
m.addConstr(cp.quicksum(x.values()) >= DEMAND)
m.solve()
status = "Optimal" if m.status == cp.COPT.OPTIMAL else f"copt status {m.status}"
objective = m.objval if m.status == cp.COPT.OPTIMAL else None
print(f"Status: {status}")
print(f"OBJECTIVE_VALUE: {objective}")
with open(os.environ.get("ORSPACE_RESULT_FILE", "result.json"), "w") as fh:
    json.dump({"status": status, "objective": objective, "solver": SOLVER}, fh)
