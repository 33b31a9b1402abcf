"""Item 77: each of the ten parts is processed once, on machine A, B or C (table_1: processing cost
of each part on each machine); a machine used at all pays its one-time setup cost; part 1 on A
exactly when part 2 is not on A; parts 3, 4, 5 on A, B, C respectively; at most `max_parts_on_C`
parts on C; minimise processing plus setup cost."""

from pathlib import Path

import pulp

from tcsexam.orspace.refmodel import main, number, parameters, solve, table

READING = "assignment of parts to machines with setup costs; part 1 on A iff part 2 not on A; 3-5 fixed; C at most 3"


def build(workspace: Path) -> dict:
    v = parameters(workspace)
    rows = {r["Machine/Part"]: r for r in table(workspace, "table_1")}
    machines = list(rows)
    parts = [c for c in next(iter(rows.values())) if c != "Machine/Part"]
    x = {(m, p): pulp.LpVariable(f"x_{m}_{p}", cat="Binary") for m in machines for p in parts}
    used = {m: pulp.LpVariable(f"used_{m}", cat="Binary") for m in machines}
    prob = pulp.LpProblem("item77", pulp.LpMinimize)
    prob += pulp.lpSum(float(rows[m][p]) * x[m, p] for m, p in x) + pulp.lpSum(
        number(v, f"d_{m}") * used[m] for m in machines
    )
    for p in parts:
        prob += pulp.lpSum(x[m, p] for m in machines) == 1
    for m, p in x:
        prob += x[m, p] <= used[m]
    prob += x["A", "1"] + x["A", "2"] == 1
    for p, m in (("3", "A"), ("4", "B"), ("5", "C")):
        prob += x[m, p] == 1
    prob += pulp.lpSum(x["C", p] for p in parts) <= number(v, "max_parts_on_C")
    return solve(prob)


if __name__ == "__main__":
    main(build)
