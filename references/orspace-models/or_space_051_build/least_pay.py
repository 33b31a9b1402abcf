"""Item 51: regular and contract nurses start at the six shift start times and work the shift
length (covering consecutive 4-hour periods around the clock); each period has at least its
required nurses; minimise the pay (hours x hourly rate); whole nurses."""

from pathlib import Path

import pulp

from tcsexam.orspace.refmodel import main, number, parameters, solve, table

READING = "cyclic shift cover by regular and contract nurses; minimise pay; whole nurses"


def build(workspace: Path) -> dict:
    v = parameters(workspace)
    rows = table(workspace, "table_1")
    need = [float(r["Required_Nurses"]) for r in rows]
    n = len(rows)
    duration = number(v, "shift_duration")
    covers = int(round(duration / (24 / n)))
    pay = {"regular": number(v, "regular_nurse_pay"), "contract": number(v, "contract_nurse_pay")}
    x = {(k, i): pulp.LpVariable(f"{k}_{i}", lowBound=0, cat="Integer") for k in pay for i in range(n)}
    prob = pulp.LpProblem("item51", pulp.LpMinimize)
    prob += pulp.lpSum(pay[k] * duration * x[k, i] for k, i in x)
    for i in range(n):
        prob += pulp.lpSum(x[k, (i - j) % n] for k in pay for j in range(covers)) >= need[i]
    return solve(prob)


if __name__ == "__main__":
    main(build)
