"""Item 46's model, shared by its readings. Each weekday the lab is open from the opening to the
closing time, and exactly one student is on duty at every moment, so the day's duty hours sum to
the opening hours. A student on duty on a day holds one shift that day, of at most the hours the
student is available that day (`table_1`; 0: not available); at most `max_shifts_per_student`
shifts a week per student; at most `max_students_per_day` students on duty a day; each student
works at least a weekly minimum; minimise the wages paid (hours times hourly wage).

The workspace gives two minima (undergraduates, graduates) but does not say which students are
undergraduates. `minimum` is the one applied to every student: the optimum under any split lies
between the optimum with every student at the smaller minimum and that with all at the larger."""

from datetime import datetime
from pathlib import Path

import pulp

from tcsexam.orspace.refmodel import number, parameters, solve, table

DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday")


def open_hours(v: dict[str, str]) -> float:
    start, end = (datetime.strptime(v[k], "%I:%M %p") for k in ("lab_opening_time", "lab_closing_time"))
    return (end - start).seconds / 3600


def build(workspace: Path, minimum: str) -> dict:
    v = parameters(workspace)
    rows = {r["Student_ID"]: r for r in table(workspace, "table_1")}
    avail = {(s, d): float(r[d]) for s, r in rows.items() for d in DAYS}
    hours = {k: pulp.LpVariable(f"h_{k[0]}_{k[1]}", lowBound=0, upBound=avail[k]) for k in avail}
    duty = {k: pulp.LpVariable(f"y_{k[0]}_{k[1]}", cat="Binary") for k in avail}
    prob = pulp.LpProblem("item46", pulp.LpMinimize)
    prob += pulp.lpSum(float(rows[s]["Wage_CNY_per_hour"]) * hours[s, d] for s, d in avail)
    for k in avail:
        prob += hours[k] <= avail[k] * duty[k]
    for d in DAYS:
        prob += pulp.lpSum(hours[s, d] for s in rows) == open_hours(v)
        prob += pulp.lpSum(duty[s, d] for s in rows) <= number(v, "max_students_per_day")
    for s in rows:
        prob += pulp.lpSum(duty[s, d] for d in DAYS) <= number(v, "max_shifts_per_student")
        prob += pulp.lpSum(hours[s, d] for d in DAYS) >= number(v, minimum)
    return solve(prob)
