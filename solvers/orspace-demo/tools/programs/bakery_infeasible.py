"""Bakery mix with highspy, but Max_Demand read as a minimum production: infeasible."""

import csv
import json
import os

import highspy
import numpy as np

params = {r["Parameter_Name"]: float(r["Value"]) for r in csv.DictReader(open("../data/general_parameters.csv"))}
rows = list(csv.DictReader(open("../data/table_1.csv")))
n = len(rows)
h = highspy.Highs()
h.setOptionValue("output_flag", False)
inf = highspy.kHighsInf
h.addVars(n, np.array([float(r["Max_Demand"]) for r in rows]), np.full(n, inf))  # wrong: demand as lower bound
h.changeColsCost(n, np.arange(n, dtype=np.int32), np.array([float(r["Profit_per_Batch"]) for r in rows]))
idx = np.arange(n, dtype=np.int32)
h.addRow(-inf, params["oven_hours_available"], n, idx, np.array([float(r["Oven_Hours_per_Batch"]) for r in rows]))
h.addRow(-inf, params["labour_hours_available"], n, idx, np.array([float(r["Labour_Hours_per_Batch"]) for r in rows]))
h.changeObjectiveSense(highspy.ObjSense.kMaximize)
h.run()
status = h.modelStatusToString(h.getModelStatus())
print(f"Status: {status}")
with open(os.environ.get("ORSPACE_RESULT_FILE", "result.json"), "w") as fh:
    json.dump({"status": status, "objective": None, "model_status": status}, fh)
