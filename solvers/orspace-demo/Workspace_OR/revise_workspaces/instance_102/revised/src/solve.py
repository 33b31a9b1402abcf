"""Revised warehouse opening (an open warehouse ships at most max_utilisation of its capacity) as a MIP with highspy."""

import csv
import json
import os

import highspy
import numpy as np

params = {r["Parameter_Name"]: float(r["Value"]) for r in csv.DictReader(open("../data/general_parameters.csv"))}
sites = list(csv.DictReader(open("../data/table_1.csv")))
cost = {r["Warehouse"]: r for r in csv.DictReader(open("../data/table_2.csv"))}
demand = list(csv.DictReader(open("../data/table_3.csv")))
W, C = len(sites), len(demand)
inf = highspy.kHighsInf
h = highspy.Highs()
h.setOptionValue("output_flag", False)
n = W + W * C
h.addVars(n, np.zeros(n), np.array([1.0] * W + [inf] * (W * C)))
c = [float(s["Fixed_Cost"]) for s in sites] + [
    params["transport_cost_multiplier"] * float(cost[s["Warehouse"]][d["Customer"]]) for s in sites for d in demand
]
h.changeColsCost(n, np.arange(n, dtype=np.int32), np.array(c))
h.changeColsIntegrality(W, np.arange(W, dtype=np.int32), np.array([highspy.HighsVarType.kInteger] * W))
for j, d in enumerate(demand):
    idx = np.array([W + w * C + j for w in range(W)], dtype=np.int32)
    h.addRow(float(d["Demand"]), inf, W, idx, np.ones(W))
for w, s in enumerate(sites):
    idx = np.array([w] + [W + w * C + j for j in range(C)], dtype=np.int32)
    h.addRow(-inf, 0.0, C + 1, idx, np.array([-float(s["Capacity"]) * params["max_utilisation"]] + [1.0] * C))
h.run()
status = h.modelStatusToString(h.getModelStatus())
objective = h.getInfo().objective_function_value
print(f"OBJECTIVE_VALUE: {objective}")
with open(os.environ["ORSPACE_RESULT_FILE"], "w") as fh:
    json.dump({"status": status, "objective": objective, "model_status": status, "mip_gap": h.getInfo().mip_gap}, fh)
