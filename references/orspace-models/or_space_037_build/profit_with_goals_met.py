"""Item 37: the docs name goals (minimum weekly profit, minimum units of A and B, process
utilisation) but no single objective; the data give each unit's profit. This reading: the goals as
constraints (profit at least the minimum, A and B at least their minima, each process's hours within
its weekly capacity, i.e. no overtime taken) and the weekly profit maximised; continuous units."""

from pathlib import Path

import pulp

from tcsexam.orspace.refmodel import main, number, parameters, solve, table

READING = "maximise weekly profit with the goals as constraints (profit and unit minima, hours within capacity)"
MODELS = ("A", "B")


def build(workspace: Path) -> dict:
    v = parameters(workspace)
    rows = {r["Process"]: r for r in table(workspace, "table_1")}
    x = {m: pulp.LpVariable(m, lowBound=number(v, f"min_model_{m}_units")) for m in MODELS}
    profit = pulp.lpSum(float(rows["Profit_per_unit"][f"Model_{m}_hours_per_unit"]) * x[m] for m in MODELS)
    prob = pulp.LpProblem("item37", pulp.LpMaximize)
    prob += profit
    prob += profit >= number(v, "min_weekly_profit")
    for p in ("I", "II"):
        prob += pulp.lpSum(float(rows[p][f"Model_{m}_hours_per_unit"]) * x[m] for m in MODELS) <= float(
            rows[p]["Maximum_Weekly_Processing_Capacity"]
        )
    return solve(prob)


if __name__ == "__main__":
    main(build)
