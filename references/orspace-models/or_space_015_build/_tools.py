"""Item 15's model, shared by its readings: each stage needs its number of tools; the tools used
at a stage go to slow repair, fast repair, or are not repaired; a repaired tool or a clean unused
one may wait for a later stage; shortfalls are bought new; minimise buying plus repair cost.
`shift`: a repair taking d stages after stage j returns for stage j + d + shift (shift 1: the
repair starts after the stage and takes d whole stages; shift 0: ready for stage j + d)."""

from pathlib import Path

import pulp

from tcsexam.orspace.refmodel import number, parameters, solve, table


def build(workspace: Path, shift: int) -> dict:
    values = parameters(workspace)
    need = {int(r["stage"]): float(r["tool_requirement"]) for r in table(workspace, "table_1")}
    stages = sorted(need)
    slow_d = int(number(values, "slow_repair_duration"))
    fast_d = int(number(values, "fast_repair_duration"))
    prob = pulp.LpProblem("item15", pulp.LpMinimize)
    new = {j: pulp.LpVariable(f"new_{j}", lowBound=0, cat="Integer") for j in stages}
    slow = {j: pulp.LpVariable(f"slow_{j}", lowBound=0, cat="Integer") for j in stages}
    fast = {j: pulp.LpVariable(f"fast_{j}", lowBound=0, cat="Integer") for j in stages}
    clean = {j: pulp.LpVariable(f"clean_{j}", lowBound=0, cat="Integer") for j in stages}  # carried after j
    dirty = {j: pulp.LpVariable(f"dirty_{j}", lowBound=0, cat="Integer") for j in stages}  # unrepaired after j
    prob += pulp.lpSum(
        number(values, "cost_new_tool") * new[j]
        + number(values, "cost_slow_repair") * slow[j]
        + number(values, "cost_fast_repair") * fast[j]
        for j in stages
    )
    for j in stages:
        returned = pulp.lpSum(slow[i] for i in stages if i + slow_d + shift == j) + pulp.lpSum(
            fast[i] for i in stages if i + fast_d + shift == j
        )
        before = clean[j - 1] if j - 1 in clean else 0
        prob += before + new[j] + returned == need[j] + clean[j]
        dirty_before = dirty[j - 1] if j - 1 in dirty else 0
        prob += slow[j] + fast[j] + dirty[j] == need[j] + dirty_before
    return solve(prob)
