"""Workshop plan (integer programme) with PuLP and its CBC; writes the structured result file."""

import csv
import json
import os

import pulp

INTEGER = True  # whole products (the model of the brief)
params = {r["Parameter_Name"]: float(r["Value"]) for r in csv.DictReader(open("../data/general_parameters.csv"))}
rows = list(csv.DictReader(open("../data/table_1.csv")))
DEMAND = 0  # products at least (the tests' infeasible variant asks more than the hours allow)
CAPACITY = True  # the capacity rows (the tests' unbounded variant forgets them)

SOLVER = "cbc"
prob = pulp.LpProblem("workshop", pulp.LpMaximize)
cat = "Integer" if INTEGER else "Continuous"
x = {r["Product"]: pulp.LpVariable(r["Product"], lowBound=0, cat=cat) for r in rows}
prob += pulp.lpSum(float(r["Profit"]) * x[r["Product"]] for r in rows)
if CAPACITY:
    prob += pulp.lpSum(float(r["Assembly_Hours"]) * x[r["Product"]] for r in rows) <= params["assembly_hours"]
    prob += pulp.lpSum(float(r["Finishing_Hours"]) * x[r["Product"]] for r in rows) <= params["finishing_hours"]
prob += pulp.lpSum(x.values()) >= DEMAND
prob.solve(pulp.PULP_CBC_CMD(msg=False))
optimal = pulp.LpStatus[prob.status] == "Optimal" and prob.sol_status == pulp.LpSolutionOptimal
status = "Optimal" if optimal else pulp.LpStatus[prob.status]
objective = pulp.value(prob.objective) if optimal else None
print(f"Status: {status}")
print(f"OBJECTIVE_VALUE: {objective}")
with open(os.environ.get("ORSPACE_RESULT_FILE", "result.json"), "w") as fh:
    json.dump({"status": status, "objective": objective, "solver": SOLVER}, fh)
