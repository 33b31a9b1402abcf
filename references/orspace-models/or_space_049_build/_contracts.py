"""Item 49's model, shared by its readings: contracts of 1-4 months for whole 100 m2 units (fee per
100 m2 from table_2) cover each month's required area (table_1); at least two different contract
lengths are signed; 1-month and 4-month contracts exclude each other; at most three distinct
contracts; minimise the total fee. `starts`: "any" (a contract may start in any month it fits) or
"first" (every contract starts in month 1). `exact`: cover each month exactly, else at least.
`distinct`: what "at most three distinct contracts" counts: "lengths" or "length_start" pairs."""

from pathlib import Path

import pulp

from tcsexam.orspace.refmodel import number, parameters, solve, table


def build(workspace: Path, starts: str, exact: bool, distinct: str) -> dict:
    values = parameters(workspace)
    need = {
        int(r["Month"]): float(next(v for k, v in r.items() if k.startswith("Required_area"))) / 100
        for r in table(workspace, "table_1")
    }
    fee = {int(r["Contract_length_months"]): float(r["Rental_fee_per_100㎡_yuan"]) for r in table(workspace, "table_2")}
    months = sorted(need)
    horizon = months[-1]
    pairs = [(s, length) for length in fee for s in months if s + length - 1 <= horizon and (starts == "any" or s == 1)]
    prob = pulp.LpProblem("item49", pulp.LpMinimize)
    n = {(s, ln): pulp.LpVariable(f"n_{s}_{ln}", lowBound=0, cat="Integer") for s, ln in pairs}
    big = sum(need.values())
    used_pair = {p: pulp.LpVariable(f"u_{p[0]}_{p[1]}", cat="Binary") for p in pairs}
    used_len = {ln: pulp.LpVariable(f"l_{ln}", cat="Binary") for ln in fee}
    prob += pulp.lpSum(fee[ln] * n[s, ln] for s, ln in pairs)
    for t in months:
        cover = pulp.lpSum(n[s, ln] for s, ln in pairs if s <= t <= s + ln - 1)
        prob += (cover == need[t]) if exact else (cover >= need[t])
    for p in pairs:
        prob += n[p] <= big * used_pair[p]
        prob += used_pair[p] <= used_len[p[1]]
    for ln in fee:
        prob += used_len[ln] <= pulp.lpSum(used_pair[p] for p in pairs if p[1] == ln)
    prob += pulp.lpSum(used_len.values()) >= number(values, "min_contract_types")
    prob += used_len[1] + used_len[4] <= 1
    cap = number(values, "max_contract_types")
    prob += (pulp.lpSum(used_len.values()) if distinct == "lengths" else pulp.lpSum(used_pair.values())) <= cap
    return solve(prob)
