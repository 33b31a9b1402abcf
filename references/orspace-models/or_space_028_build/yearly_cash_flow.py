"""Item 28: four options over three years. Each year's 20% one-year option (any amount, at the start
of the year, back with profit at its end); the two-year option started in year 1 (at most its limit,
back at 150% at the end of year 2); the two-year option started in year 2 (at most its limit, back
at 160% at the end of year 3); the one-year option of year 3 (at most its limit, 40% profit).
Money not invested is kept; each year invests at most the cash in hand; maximise the money at the
end of year 3."""

from pathlib import Path

import pulp

from tcsexam.orspace.refmodel import main, number, parameters, solve

READING = "annual 20% option every year, two-year options of years 1 and 2, 40% option of year 3; idle cash kept"


def build(workspace: Path) -> dict:
    v = parameters(workspace)
    yearly = 1 + number(v, "annual_profit_rate") / 100
    annual = [pulp.LpVariable(f"annual_{t}", lowBound=0) for t in range(3)]
    two_1 = pulp.LpVariable("two_year_1", lowBound=0, upBound=number(v, "investment_limit_year1"))
    two_2 = pulp.LpVariable("two_year_2", lowBound=0, upBound=number(v, "investment_limit_year2"))
    one_3 = pulp.LpVariable("one_year_3", lowBound=0, upBound=number(v, "investment_limit_year3"))
    idle = [pulp.LpVariable(f"idle_{t}", lowBound=0) for t in range(3)]
    prob = pulp.LpProblem("item28", pulp.LpMaximize)
    prob += annual[0] + two_1 + idle[0] == number(v, "initial_fund")
    prob += annual[1] + two_2 + idle[1] == yearly * annual[0] + idle[0]
    prob += (
        annual[2] + one_3 + idle[2]
        == yearly * annual[1] + number(v, "return_rate_year1_to_year2") / 100 * two_1 + idle[1]
    )
    prob += (
        yearly * annual[2]
        + number(v, "return_rate_year2_to_year3") / 100 * two_2
        + (1 + number(v, "profit_rate_year3") / 100) * one_3
        + idle[2]
    )
    return solve(prob)


if __name__ == "__main__":
    main(build)
