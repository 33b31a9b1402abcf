"""Item 64: hire a subset of the candidates; total salary within the budget, at most the maximum
number of employees, total skill and total project experience at least their minima, at most one of
G and J; minimise the total salary."""

from pathlib import Path

import pulp

from tcsexam.orspace.refmodel import main, number, parameters, solve, table

READING = "subset of candidates within budget and head count, skill and experience minima, at most one of G and J"


def build(workspace: Path) -> dict:
    v = parameters(workspace)
    rows = {r["Candidate"]: r for r in table(workspace, "table_1")}
    x = {c: pulp.LpVariable(c, cat="Binary") for c in rows}
    salary = pulp.lpSum(float(r["Salary"]) * x[c] for c, r in rows.items())
    prob = pulp.LpProblem("item64", pulp.LpMinimize)
    prob += salary
    prob += salary <= number(v, "company_budget")
    prob += pulp.lpSum(x.values()) <= number(v, "max_employees")
    prob += pulp.lpSum(float(r["Skill_Level"]) * x[c] for c, r in rows.items()) >= number(v, "min_skill_level")
    prob += pulp.lpSum(float(r["Project_Management_Experience"]) * x[c] for c, r in rows.items()) >= number(
        v, "min_project_experience"
    )
    prob += x["G"] + x["J"] <= number(v, "max_one_candidate_g_j")
    return solve(prob)


if __name__ == "__main__":
    main(build)
