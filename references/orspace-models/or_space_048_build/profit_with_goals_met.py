"""Item 48: the docs name goals (minimum weekly profit, contract minima for A and B, process I at
exactly its weekly hours, process II overtime within its maximum, overtime units earning less) but no
single objective. This reading: the goals as constraints and the weekly profit maximised, net of the
reduction for units made in process II's overtime: units of A and B made in regular time use
process II's capacity, those made in overtime use at most the allowed overtime hours; continuous
units."""

from pathlib import Path

import pulp

from tcsexam.orspace.refmodel import main, number, parameters, solve, table

READING = "maximise weekly profit net of overtime reductions, goals as constraints (process I exactly its hours)"
MODELS = ("A", "B")


def build(workspace: Path) -> dict:
    v = parameters(workspace)
    rows = {r["Process"]: r for r in table(workspace, "table_1")}
    regular = {m: pulp.LpVariable(f"regular_{m}", lowBound=0) for m in MODELS}
    late = {m: pulp.LpVariable(f"overtime_{m}", lowBound=0) for m in MODELS}
    hours = {(p, m): float(rows[p][f"Model_{m}_hours_per_unit"]) for p in ("I", "II") for m in MODELS}
    unit = {m: float(rows["Profit_yuan_per_unit"][f"Model_{m}_hours_per_unit"]) for m in MODELS}
    made = {m: regular[m] + late[m] for m in MODELS}
    profit = pulp.lpSum(unit[m] * made[m] - number(v, f"model_{m}_overtime_profit_reduction") * late[m] for m in MODELS)
    prob = pulp.LpProblem("item48", pulp.LpMaximize)
    prob += profit
    prob += profit >= number(v, "min_weekly_profit")
    for m in MODELS:
        prob += made[m] >= number(v, f"min_model_{m}_units")
    prob += pulp.lpSum(hours["I", m] * made[m] for m in MODELS) == number(v, "process_I_hours")
    prob += pulp.lpSum(hours["II", m] * regular[m] for m in MODELS) <= float(
        rows["II"]["Maximum_Weekly_Processing_Capacity"]
    )
    prob += pulp.lpSum(hours["II", m] * late[m] for m in MODELS) <= number(v, "process_II_max_overtime")
    return solve(prob)


if __name__ == "__main__":
    main(build)
