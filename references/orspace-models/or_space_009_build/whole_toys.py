"""Item 9: whole numbers of four toys within wood and steel; trucks exclude trains; boats require
airplanes; boats at most trains; maximise profit (binaries link a toy's count to whether it is
made)."""

from pathlib import Path

import pulp

from tcsexam.orspace.refmodel import main, number, parameters, solve, table

READING = "whole toys; trucks exclude trains, boats need airplanes, boats <= trains"


def build(workspace: Path) -> dict:
    v = parameters(workspace)
    rows = {r["Toy_Type"]: r for r in table(workspace, "table_1")}
    big = number(v, "available_wood") + number(v, "available_steel")
    x = {t: pulp.LpVariable(t, lowBound=0, cat="Integer") for t in rows}
    made = {t: pulp.LpVariable(f"made_{t}", cat="Binary") for t in rows}
    prob = pulp.LpProblem("item9", pulp.LpMaximize)
    prob += pulp.lpSum(float(r["Profit_Per_Unit"]) * x[t] for t, r in rows.items())
    prob += pulp.lpSum(float(r["Wood_Required_Per_Unit"]) * x[t] for t, r in rows.items()) <= number(
        v, "available_wood"
    )
    prob += pulp.lpSum(float(r["Steel_Required_Per_Unit"]) * x[t] for t, r in rows.items()) <= number(
        v, "available_steel"
    )
    for t in rows:
        prob += x[t] <= big * made[t]
        prob += x[t] >= made[t]
    prob += made["truck"] + made["train"] <= 1
    prob += made["boat"] <= made["airplane"]
    prob += x["boat"] <= x["train"]
    return solve(prob)


if __name__ == "__main__":
    main(build)
