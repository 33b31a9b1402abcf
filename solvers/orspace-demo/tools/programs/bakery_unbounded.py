"""Bakery mix with highspy, but the capacity rows and demand caps were forgotten: unbounded."""

import csv
import json
import os

import highspy
import numpy as np

rows = list(csv.DictReader(open("../data/table_1.csv")))
n = len(rows)
h = highspy.Highs()
h.setOptionValue("output_flag", False)
h.setOptionValue("presolve", "off")
h.addVars(n, np.zeros(n), np.full(n, highspy.kHighsInf))
h.changeColsCost(n, np.arange(n, dtype=np.int32), np.array([float(r["Profit_per_Batch"]) for r in rows]))
h.changeObjectiveSense(highspy.ObjSense.kMaximize)
h.run()
status = h.modelStatusToString(h.getModelStatus())
print(f"Status: {status}")
with open(os.environ.get("ORSPACE_RESULT_FILE", "result.json"), "w") as fh:
    json.dump({"status": status, "objective": None}, fh)
