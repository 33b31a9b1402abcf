"""What the project's OR-Space reference models share (`references/orspace-models/`, docs/orspace.md
"audit-references"): reading a Build workspace's own documents and data, solving a PuLP model with
the bundled HiGHS (or CBC), and printing the one JSON line the audit reads.

A reference model is a Python file `<models>/<workspace_id>/<reading>.py` with a module-level
string `READING` (the reading of the requirements it encodes, in words) that, run as
`python <file> <workspace folder>`, reads the workspace's `data/` (never a number of the release's
oracle) and prints one line `{"status": ..., "objective": ..., "solver": ...}` (`main` does it).
The status is Optimal only when the solver proved optimality (`result.pulp_result`).
"""

from __future__ import annotations

import csv
import json
import math
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tcsexam.fileio import JsonObject
from tcsexam.orspace.result import pulp_result
from tcsexam.orspace.solvers import Solver


def _clean(text: str | None) -> str:
    return (text or "").strip()


def parameters(workspace: Path) -> dict[str, str]:
    """`data/general_parameters.csv` as {Parameter_Name: Value} (white space around cells dropped:
    some release files write `Name, Value`)."""
    rows = table(workspace, "general_parameters")
    return {_clean(r.get("Parameter_Name")): _clean(r.get("Value")) for r in rows if _clean(r.get("Parameter_Name"))}


def number(values: dict[str, str], name: str) -> float:
    """A numeric parameter; a missing or non-numeric one is an error naming it."""
    if name not in values:
        raise KeyError(f"parameter {name} not in general_parameters.csv")
    return float(values[name])


def table(workspace: Path, name: str) -> list[dict[str, str]]:
    """`data/<name>.csv` (e.g. `table_1`) as rows of stripped cells keyed by stripped headers."""
    path = Path(workspace) / "data" / f"{name}.csv"
    with path.open(newline="", encoding="utf-8-sig") as handle:
        reader = csv.reader(handle)
        header = [_clean(h) for h in next(reader, [])]
        return [
            dict(zip(header, (_clean(c) for c in row), strict=False)) for row in reader if any(_clean(c) for c in row)
        ]


def cell(row: dict[str, str], column: str) -> float | None:
    """A numeric cell; None for a blank one."""
    text = row.get(column, "")
    return float(text) if text not in ("", "-") else None


def solve(prob: Any, solver: str = "highs", time_limit_s: float = 120.0) -> JsonObject:
    """Solve a PuLP problem with HiGHS (highspy) or CBC and return the audit's result line."""
    import pulp

    backend = (
        pulp.HiGHS(msg=False, timeLimit=time_limit_s)
        if solver == Solver.HIGHS
        else pulp.PULP_CBC_CMD(msg=False, timeLimit=time_limit_s)
    )
    prob.solve(backend)
    result = pulp_result(prob)
    objective = result["objective"] if result["status"] == "Optimal" else None
    return {"status": result["status"], "objective": objective, "solver": solver}


def optimum(objective: float, solver: str) -> JsonObject:
    """The result line of a model solved by exhaustive search (no LP/MIP solver involved)."""
    return {"status": "Optimal", "objective": objective, "solver": solver}


def period_hours(span: str) -> float:
    """The length in hours of a period written `HH:MM-HH:MM` (one that ends past midnight wraps)."""
    start, end = (float(t.split(":")[0]) for t in span.split("-"))
    return (end - start) % 24 or 24


def cyclic_cover(need: list[float], covers: int) -> JsonObject:
    """Least whole number of people so that each of the day's cyclic periods has at least `need[i]`
    on duty, a person starting at period i working periods i, i+1, ..., i+covers-1 (around the
    clock). Items 26, 52 and 83."""
    import pulp

    n = len(need)
    start = [pulp.LpVariable(f"start_{i}", lowBound=0, cat="Integer") for i in range(n)]
    prob = pulp.LpProblem("cyclic_cover", pulp.LpMinimize)
    prob += pulp.lpSum(start)
    for i in range(n):
        prob += pulp.lpSum(start[(i - k) % n] for k in range(covers)) >= need[i]
    return solve(prob)


def buy_then_sell(buy: list[float], sell: list[float], initial_stock: float, capacity: float) -> JsonObject:
    """Most sales revenue minus purchase cost over the periods of `buy`/`sell` prices: each period
    the stock plus the period's purchase stays within `capacity`, then at most that is sold; what is
    left is the next period's stock (`initial_stock` before the first). Items 16 and 50."""
    import pulp

    periods = range(len(buy))
    bought = [pulp.LpVariable(f"buy_{t}", lowBound=0) for t in periods]
    sold = [pulp.LpVariable(f"sell_{t}", lowBound=0) for t in periods]
    stock = [pulp.LpVariable(f"stock_{t}", lowBound=0) for t in periods]
    prob = pulp.LpProblem("buy_then_sell", pulp.LpMaximize)
    prob += pulp.lpSum(sell[t] * sold[t] - buy[t] * bought[t] for t in periods)
    for t in periods:
        before = stock[t - 1] if t else initial_stock
        prob += before + bought[t] <= capacity
        prob += stock[t] == before + bought[t] - sold[t]
    return solve(prob)


def knapsack(
    value: dict[str, float], cost: dict[str, float], budget: float, exclusive: list[tuple[str, str]]
) -> JsonObject:
    """Most total `value` of a 0/1 choice of the keys with total `cost` within `budget`, at most one
    key of each `exclusive` pair chosen. Items 62 and 72."""
    import pulp

    pick = {k: pulp.LpVariable(f"pick_{k}", cat="Binary") for k in value}
    prob = pulp.LpProblem("knapsack", pulp.LpMaximize)
    prob += pulp.lpSum(value[k] * pick[k] for k in value)
    prob += pulp.lpSum(cost[k] * pick[k] for k in value) <= budget
    for a, b in exclusive:
        prob += pick[a] + pick[b] <= 1
    return solve(prob)


def routed_production(
    hours: dict[tuple[str, str], float],
    stages: dict[str, list[str]],
    capacity: dict[str, float],
    rate: dict[str, float],
    margin: dict[str, float],
    integer: bool,
) -> JsonObject:
    """Most profit of products that each pass every stage on one of the stage's machines able to
    process them (`hours[product, machine]` given): the units of a product processed at each stage
    equal its output, a machine's hours stay within `capacity`, and profit is `margin` (price minus
    raw material) per unit minus each machine's hours used times its hourly `rate`. Items 27 and 31."""
    import pulp

    cat = "Integer" if integer else "Continuous"
    products = sorted({p for p, _ in hours})
    made = {p: pulp.LpVariable(f"made_{p}", lowBound=0, cat=cat) for p in products}
    on = {k: pulp.LpVariable(f"on_{k[0]}_{k[1]}", lowBound=0, cat=cat) for k in hours}
    used = {m: pulp.lpSum(hours[p, n] * on[p, n] for p, n in hours if n == m) for m in capacity}
    prob = pulp.LpProblem("routed_production", pulp.LpMaximize)
    prob += pulp.lpSum(margin[p] * made[p] for p in products) - pulp.lpSum(rate[m] * used[m] for m in capacity)
    for p in products:
        for machines in stages.values():
            prob += pulp.lpSum(on[p, m] for m in machines if (p, m) in hours) == made[p]
    for m in capacity:
        prob += used[m] <= capacity[m]
    return solve(prob)


def main(build: Callable[[Path], JsonObject]) -> None:
    """Run `build(workspace)` on the folder named by argv[1] and print its result line."""
    if len(sys.argv) != 2:
        sys.exit(f"usage: {sys.argv[0]} WORKSPACE")
    result = build(Path(sys.argv[1]))
    value = result.get("objective")
    if isinstance(value, float) and not math.isfinite(value):
        result["objective"] = None
    print(json.dumps(result))
