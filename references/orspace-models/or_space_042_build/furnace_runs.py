"""Item 42: the number of furnace runs with each steelmaking method; every run makes k tons; at
least d tons within c hours; minimise fuel cost (continuous runs, the LP the text asks for)."""

from pathlib import Path

import pulp

from tcsexam.orspace.refmodel import main, number, parameters, solve

READING = "runs of method 1 and 2 (continuous LP): k tons per run, at least d tons within c hours, min fuel"


def build(workspace: Path) -> dict:
    v = parameters(workspace)
    first, second = pulp.LpVariable("first", lowBound=0), pulp.LpVariable("second", lowBound=0)
    prob = pulp.LpProblem("item42", pulp.LpMinimize)
    prob += number(v, "m") * first + number(v, "n") * second
    prob += number(v, "k") * (first + second) >= number(v, "d")
    prob += number(v, "a") * first + number(v, "b") * second <= number(v, "c")
    return solve(prob)


if __name__ == "__main__":
    main(build)
