"""Independent reference models of the demo problems (highspy only), used to compute the demo's
oracle objectives in references/orspace/ and the Explain solver records. Run from the repository
root: `python solvers/orspace-demo/tools/make_demo.py`."""

from __future__ import annotations

import csv
import random
from pathlib import Path

import highspy
import numpy as np


def read_params(path: Path) -> dict[str, float]:
    with path.open(newline="") as fh:
        return {r["Parameter_Name"]: float(r["Value"]) for r in csv.DictReader(fh)}


def read_table(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as fh:
        return list(csv.DictReader(fh))


def solve(c, A, lo, hi, lb, ub, integrality=None, sense="min", time_limit=None):
    """Solve min/max c x s.t. lo <= A x <= hi, lb <= x <= ub with HiGHS; returns (status, obj, x, duals)."""
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    if time_limit:
        h.setOptionValue("time_limit", float(time_limit))
    A = np.asarray(A, dtype=float)
    n = A.shape[1]
    inf = highspy.kHighsInf
    h.addVars(n, np.asarray(lb, float), np.where(np.isinf(ub), inf, np.asarray(ub, float)))
    h.changeColsCost(n, np.arange(n, dtype=np.int32), np.asarray(c, float))
    for i in range(A.shape[0]):
        idx = np.nonzero(A[i])[0].astype(np.int32)
        h.addRow(-inf if np.isinf(lo[i]) else lo[i], inf if np.isinf(hi[i]) else hi[i], len(idx), idx, A[i, idx])
    if integrality is not None:
        h.changeColsIntegrality(
            n,
            np.arange(n, dtype=np.int32),
            np.array([highspy.HighsVarType.kInteger if v else highspy.HighsVarType.kContinuous for v in integrality]),
        )
    if sense == "max":
        h.changeObjectiveSense(highspy.ObjSense.kMaximize)
    h.run()
    status = h.modelStatusToString(h.getModelStatus())
    sol = h.getSolution()
    return status, h.getInfo().objective_function_value, list(sol.col_value), list(sol.row_dual), list(sol.col_dual)


def bakery(folder: Path, exclusive: tuple[str, str] | None = None):
    p = read_params(folder / "data" / "general_parameters.csv")
    rows = read_table(folder / "data" / "table_1.csv")
    n = len(rows)
    profit = [float(r["Profit_per_Batch"]) for r in rows]
    oven = [float(r["Oven_Hours_per_Batch"]) for r in rows]
    labour = [float(r["Labour_Hours_per_Batch"]) for r in rows]
    demand = [float(r["Max_Demand"]) for r in rows]
    inf = float("inf")
    if exclusive is None:
        return solve(
            profit,
            [oven, labour],
            [-inf, -inf],
            [p["oven_hours_available"], p["labour_hours_available"]],
            [0] * n,
            demand,
            sense="max",
        )
    names = [r["Product"] for r in rows]
    a, b = names.index(exclusive[0]), names.index(exclusive[1])
    # variables: x (n) then y (binary: 1 = produce a, 0 = produce b)
    c = profit + [0.0]
    A = [oven + [0.0], labour + [0.0]]
    lo, hi = [-inf, -inf], [p["oven_hours_available"], p["labour_hours_available"]]
    row = [0.0] * (n + 1)
    row[a] = 1.0
    row[n] = -demand[a]
    A.append(row)
    lo.append(-inf)
    hi.append(0.0)
    row = [0.0] * (n + 1)
    row[b] = 1.0
    row[n] = demand[b]
    A.append(row)
    lo.append(-inf)
    hi.append(demand[b])
    return solve(c, A, lo, hi, [0] * (n + 1), demand + [1.0], integrality=[0] * n + [1], sense="max")


def facility(folder: Path):
    p = read_params(folder / "data" / "general_parameters.csv")
    sites = read_table(folder / "data" / "table_1.csv")
    costs = read_table(folder / "data" / "table_2.csv")
    customers = [k for k in costs[0] if k != "Warehouse"]
    demand = {r["Customer"]: float(r["Demand"]) for r in read_table(folder / "data" / "table_3.csv")}
    W, C = len(sites), len(customers)
    # variables: open[w] (binary), ship[w,c]
    nvar = W + W * C
    cost = [float(s["Fixed_Cost"]) for s in sites] + [
        float(costs[w][c]) * p.get("transport_cost_multiplier", 1.0) for w in range(W) for c in customers
    ]
    A, lo, hi = [], [], []
    inf = float("inf")
    for j, c in enumerate(customers):
        row = [0.0] * nvar
        for w in range(W):
            row[W + w * C + j] = 1.0
        A.append(row)
        lo.append(demand[c])
        hi.append(inf)
    for w, s in enumerate(sites):
        row = [0.0] * nvar
        for j in range(C):
            row[W + w * C + j] = 1.0
        row[w] = -float(s["Capacity"]) * p.get("max_utilisation", 1.0)
        A.append(row)
        lo.append(-inf)
        hi.append(0.0)
    return solve(cost, A, lo, hi, [0] * nvar, [1.0] * W + [inf] * (W * C), integrality=[1] * W + [0] * (W * C))


def shift_balance(folder: Path, time_limit=None):
    """Market-split style balancing: assign jobs to the day shift so each resource's day load is as
    close as possible to its target; minimise the total absolute deviation."""
    p = read_params(folder / "data" / "general_parameters.csv")
    jobs = read_table(folder / "data" / "table_1.csv")
    resources = [k for k in jobs[0] if k != "Job"]
    n, m = len(jobs), len(resources)
    inf = float("inf")
    nvar = n + 2 * m
    c = [0.0] * n + [1.0] * (2 * m)
    A, lo, hi = [], [], []
    for i, r in enumerate(resources):
        row = [float(j[r]) for j in jobs] + [0.0] * (2 * m)
        row[n + i] = 1.0
        row[n + m + i] = -1.0
        target = p[f"day_target_{r}"]
        A.append(row)
        lo.append(target)
        hi.append(target)
    return solve(
        c,
        A,
        lo,
        hi,
        [0] * nvar,
        [1.0] * n + [inf] * (2 * m),
        integrality=[1] * n + [0] * (2 * m),
        time_limit=time_limit,
    )


def market_split_data(m: int, n: int, seed: int):
    rng = random.Random(seed)
    a = [[rng.randint(0, 99) for _ in range(n)] for _ in range(m)]
    return a, [sum(r) // 2 for r in a]
