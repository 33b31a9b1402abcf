"""Item 29's pre-emptive goal programme, shared by its readings. People of each applicant type are
placed in a branch (Donghai, Nanjiang) in one of the type's suitable specialties, at most the
type's number of people. Priority 1: every branch's demand for every specialty is "fully met": exactly (`exact`), or
at least (the goal-programming form: only a shortfall below the demand violates it, so more may be
recruited than demanded). Priority 2: at least the target number placed in their preferred specialty (the
shortfall below it minimised first). Priority 3: at least the target number placed in their
preferred city (its shortfall minimised next, priority 2's optimum kept). `report` picks the
answer to "how many people can't meet priority 3": `shortfall` (the deviation below priority 3's
target) or `placed_elsewhere` (people placed who are not in their preferred city)."""

from pathlib import Path

import pulp

from tcsexam.orspace.refmodel import number, parameters, solve, table


def build(workspace: Path, report: str, exact: bool) -> dict:
    v = parameters(workspace)
    demand = {
        (r["Branch_Location"].split()[0], int(r["Specialty"])): float(r["Demand"])
        for r in table(workspace, "table_4_3")
    }
    types = table(workspace, "table_4_4")
    x = {
        (r["Type"], city, s): pulp.LpVariable(f"x_{r['Type']}_{city}_{s}", lowBound=0, cat="Integer")
        for r in types
        for city, s in demand
        if str(s) in r["Suitable_Specialty"].replace(" ", "").split(",")
    }
    size = {r["Type"]: float(r["Number_of_People"]) for r in types}
    prefer_s = {r["Type"]: int(r["Preferred_Specialty"]) for r in types}
    prefer_c = {r["Type"]: r["Preferred_City"].split()[0] for r in types}
    specialty = pulp.lpSum(x[k] for k in x if k[2] == prefer_s[k[0]])
    city = pulp.lpSum(x[k] for k in x if k[1] == prefer_c[k[0]])
    short2 = pulp.LpVariable("short2", lowBound=0)
    short3 = pulp.LpVariable("short3", lowBound=0)
    prob = pulp.LpProblem("item29", pulp.LpMinimize)
    for t in size:
        prob += pulp.lpSum(x[k] for k in x if k[0] == t) <= size[t]
    for cs, need in demand.items():
        placed = pulp.lpSum(x[k] for k in x if k[1:] == cs)
        prob += (placed == need) if exact else (placed >= need)
    prob += specialty + short2 >= number(v, "priority_2_target")
    prob += city + short3 >= number(v, "priority_3_target")
    prob.setObjective(short2)
    first = solve(prob)
    if first["status"] != "Optimal":
        return first
    prob += short2 <= first["objective"] + 1e-6
    prob.setObjective(short3)
    result = solve(prob)
    if result["status"] == "Optimal" and report == "placed_elsewhere":
        result["objective"] = sum(pulp.value(x[k]) for k in x) - pulp.value(city)
    return result
