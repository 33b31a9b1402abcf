"""Item 88's model, shared by its readings: lots of liquid and solid made this week, each lot using
both machines for its minutes, within each machine's hours; the week's demand is met from the
initial inventory plus production; maximise the total ending inventory."""

from pathlib import Path

import pulp

from tcsexam.orspace.refmodel import number, parameters, solve


def build(workspace: Path, integer: bool) -> dict:
    v = parameters(workspace)
    cat = "Integer" if integer else "Continuous"
    kinds = ("liquid", "solid")
    x = {k: pulp.LpVariable(f"x_{k}", lowBound=0, cat=cat) for k in kinds}
    end = {k: number(v, f"initial_{k}_inventory") + x[k] - number(v, f"forecast_{k}_demand") for k in kinds}
    prob = pulp.LpProblem("item88", pulp.LpMaximize)
    prob += pulp.lpSum(end.values())
    for m in (1, 2):
        used = pulp.lpSum(number(v, f"machine_{m}_time_per_{k}_lot") * x[k] for k in kinds)
        prob += used <= 60 * number(v, f"machine_{m}_available_time")
    for k in kinds:
        prob += end[k] >= 0
    return solve(prob)
