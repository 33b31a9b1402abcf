"""Item 26: the day is a cycle of the table's consecutive periods; a person starting at a period's
beginning works continuously for the shift length, so covers that period and the next ones
(shift / period length of them, around the clock); at least the required number in each period;
minimise the number of people (whole)."""

from pathlib import Path

import pulp

from tcsexam.orspace.refmodel import main, number, parameters, solve, table

TABLE, NEED, SPAN, SHIFT = "table_1", "Required_Salespeople", "Time_Period", "shift_duration"
READING = "cyclic 4-hour periods, shifts start at a period and cover consecutive periods; whole people"


def _hours(span: str) -> float:
    start, end = (float(t.split(":")[0]) for t in span.split("-"))
    return (end - start) % 24 or 24


def build(workspace: Path) -> dict:
    v = parameters(workspace)
    rows = table(workspace, TABLE)
    need = [float(r[NEED]) for r in rows]
    covers = int(round(number(v, SHIFT) / _hours(rows[0][SPAN])))
    n = len(rows)
    x = [pulp.LpVariable(f"start_{i}", lowBound=0, cat="Integer") for i in range(n)]
    prob = pulp.LpProblem("shifts", pulp.LpMinimize)
    prob += pulp.lpSum(x)
    for i in range(n):
        prob += pulp.lpSum(x[(i - k) % n] for k in range(covers)) >= need[i]
    return solve(prob)


if __name__ == "__main__":
    main(build)
