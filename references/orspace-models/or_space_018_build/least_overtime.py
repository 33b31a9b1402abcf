"""Item 18: meet both fabrics' minimum sales at the common production rate within the weekly time
plus overtime (at most its maximum); the answer is the least overtime (hours), the goal the
requirements put after using the full production time."""

from pathlib import Path

import pulp

from tcsexam.orspace.refmodel import main, number, parameters, solve

READING = "least overtime hours needed to meet both minimum sales (the full weekly time used first)"


def build(workspace: Path) -> dict:
    v = parameters(workspace)
    curtain = pulp.LpVariable("curtain", lowBound=number(v, "min_curtain_fabric_sales"))
    clothing = pulp.LpVariable("clothing", lowBound=number(v, "min_clothing_fabric_sales"))
    overtime = pulp.LpVariable("overtime", lowBound=0, upBound=number(v, "max_overtime"))
    prob = pulp.LpProblem("item18", pulp.LpMinimize)
    prob += overtime
    hours = (curtain + clothing) / number(v, "fabric_production_rate")
    prob += hours <= number(v, "weekly_production_time") + overtime
    prob += hours >= number(v, "weekly_production_time")
    return solve(prob)


if __name__ == "__main__":
    main(build)
