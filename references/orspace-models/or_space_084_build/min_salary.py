"""Item 84: hire between the minimum and the maximum number of candidates; total salary within the
budget; at least the minimum number with a Master's or Doctoral degree; total work experience at
least the minimum; at most one of A and E; minimise the total salary."""

from pathlib import Path

import pulp

from tcsexam.orspace.refmodel import main, number, parameters, solve, table

READING = "2 to 3 hires within budget, an advanced degree, experience minimum, at most one of A and E"
ADVANCED = ("master", "doctor")


def build(workspace: Path) -> dict:
    v = parameters(workspace)
    rows = {r["Candidate"]: r for r in table(workspace, "table_1")}
    x = {c: pulp.LpVariable(c, cat="Binary") for c in rows}
    salary = pulp.lpSum(float(r["Salary"]) * x[c] for c, r in rows.items())
    advanced = [c for c, r in rows.items() if any(a in r["Qualification"].lower() for a in ADVANCED)]
    prob = pulp.LpProblem("item84", pulp.LpMinimize)
    prob += salary
    prob += salary <= number(v, "budget_limit")
    prob += pulp.lpSum(x.values()) <= number(v, "max_employees")
    prob += pulp.lpSum(x.values()) >= number(v, "min_employees")
    prob += pulp.lpSum(x[c] for c in advanced) >= number(v, "min_advanced_degree_candidates")
    prob += pulp.lpSum(float(r["Work_Experience"]) * x[c] for c, r in rows.items()) >= number(v, "min_work_experience")
    prob += x["A"] + x["E"] <= number(v, "max_equivalent_candidates")
    return solve(prob)


if __name__ == "__main__":
    main(build)
