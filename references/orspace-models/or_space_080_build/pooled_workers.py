"""Item 80: one method per task; each task needs its method's effective hours, supplied by skilled
workers and labourers (their effective weekly hours each), who are hired in whole numbers and shared
across the tasks; a method's fixed cost is paid when it is chosen; Task 1 by Method B excludes Task
3 by Method A; Task 3 by Method B needs at least the minimum skilled workers; skilled workers at
most the hiring ratio times the labourers, each kind within its maximum; minimise weekly wages plus
fixed costs. The data give both methods of a task the same hours, so methods differ only by the
fixed costs and the two rules."""

from pathlib import Path

import pulp

from tcsexam.orspace.refmodel import main, number, parameters, solve, table

READING = "one method per task, workers pooled over the tasks, whole workers, fixed costs and the two method rules"


def build(workspace: Path) -> dict:
    v = parameters(workspace)
    rows = table(workspace, "table_1")
    pick = {(r["Task"], r["Method"]): pulp.LpVariable(f"pick_{r['Task']}_{r['Method']}", cat="Binary") for r in rows}
    need = {(r["Task"], r["Method"]): float(r["Effective_Hours"]) for r in rows}
    fixed = {(r["Task"], r["Method"]): float(r["Fixed_Cost"]) for r in rows}
    skilled = pulp.LpVariable("skilled", lowBound=0, upBound=number(v, "max_skilled_workers"), cat="Integer")
    labour = pulp.LpVariable("laborers", lowBound=0, upBound=number(v, "max_laborers"), cat="Integer")
    prob = pulp.LpProblem("item80", pulp.LpMinimize)
    prob += (
        number(v, "skilled_worker_weekly_wage") * skilled
        + number(v, "laborer_weekly_wage") * labour
        + pulp.lpSum(fixed[k] * pick[k] for k in pick)
    )
    for task in {t for t, _ in pick}:
        prob += pulp.lpSum(pick[k] for k in pick if k[0] == task) == 1
    prob += number(v, "skilled_worker_weekly_hours") * skilled + number(
        v, "laborer_weekly_hours"
    ) * labour >= pulp.lpSum(need[k] * pick[k] for k in pick)
    if number(v, "exclusion_rule_task1_task3"):
        prob += pick["Task_1", "Method_B"] + pick["Task_3", "Method_A"] <= 1
    prob += skilled >= number(v, "min_skilled_workers_task3_methodB") * pick["Task_3", "Method_B"]
    prob += skilled <= number(v, "skilled_worker_hiring_ratio") * labour
    return solve(prob)


if __name__ == "__main__":
    main(build)
