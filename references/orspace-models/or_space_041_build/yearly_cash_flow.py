"""Item 41: at the start of each year, cash on hand (the initial capital, then what matured at the
end of the year before) is invested in the projects open that year (each within its capacity) or
kept; a project's money returns times its rate at the end of its maturity year (`Same Year`: the
year it is invested); maximise the cash at the end of year 3."""

import re
from pathlib import Path

import pulp

from tcsexam.orspace.refmodel import main, number, parameters, solve, table

READING = "multi-year cash flow: invest what is on hand each January; returns at the end of the maturity year"


def _year(text: str) -> int:
    return int(re.search(r"\d+", text).group())


def build(workspace: Path) -> dict:
    v = parameters(workspace)
    rows = table(workspace, "table_1")
    years = range(1, 4)
    invest, returns = {}, {}
    for r in rows:
        pid = r["Project_ID"]
        for t in range(_year(r["Availability_Start"]), _year(r["Availability_End"]) + 1):
            cap = None if r["Investment_Capacity"].lower() == "unlimited" else float(r["Investment_Capacity"])
            var = pulp.LpVariable(f"p{pid}_y{t}", lowBound=0, upBound=cap)
            invest[pid, t] = var
            ends = t if r["Maturity_End"].lower() == "same year" else _year(r["Maturity_End"])
            returns.setdefault(ends, []).append(float(r["Interest_Rate"]) * var)
    kept = {t: pulp.LpVariable(f"kept_{t}", lowBound=0) for t in years}
    prob = pulp.LpProblem("item41", pulp.LpMaximize)
    for t in years:
        on_hand = number(v, "initial_capital") if t == 1 else kept[t - 1] + pulp.lpSum(returns.get(t - 1, []))
        prob += pulp.lpSum(x for (pid, y), x in invest.items() if y == t) + kept[t] == on_hand
    prob += kept[3] + pulp.lpSum(returns.get(3, []))
    return solve(prob)


if __name__ == "__main__":
    main(build)
