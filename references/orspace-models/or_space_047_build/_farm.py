"""Item 47's model, shared by its readings: hectares of soybean, corn and wheat, dairy cows and
chickens; crops and the cows' feed land within the farm's land; the animals' investment within the
funds; each season's labour (crops, animals, and person-days sold as external work) within that
season's labour force; cows and chickens within the barn and coop; maximise the net income of
crops, animals and external work."""

from pathlib import Path

import pulp

from tcsexam.orspace.refmodel import number, parameters, solve, table

CROPS = ("Soybean", "Corn", "Wheat")
SEASONS = {"autumn_winter": "Person-days (Autumn/Winter)", "spring_summer": "Person-days (Spring/Summer)"}


def build(workspace: Path, whole_animals: bool) -> dict:
    v = parameters(workspace)
    rows = {r["Item"]: r for r in table(workspace, "table_1")}
    cat = "Integer" if whole_animals else "Continuous"
    land = {c: pulp.LpVariable(c, lowBound=0) for c in CROPS}
    cows = pulp.LpVariable("cows", lowBound=0, upBound=number(v, "max_dairy_cows"), cat=cat)
    hens = pulp.LpVariable("chickens", lowBound=0, upBound=number(v, "max_chickens"), cat=cat)
    external = {s: pulp.LpVariable(f"external_{s}", lowBound=0) for s in SEASONS}
    income = rows["Annual Net Income (Yuan/hectare)"]
    prob = pulp.LpProblem("item47", pulp.LpMaximize)
    prob += (
        pulp.lpSum(float(income[c]) * land[c] for c in CROPS)
        + number(v, "net_income_per_dairy_cow") * cows
        + number(v, "net_income_per_chicken") * hens
        + pulp.lpSum(number(v, f"external_work_rate_{s}") * external[s] for s in SEASONS)
    )
    prob += pulp.lpSum(land.values()) + number(v, "land_per_dairy_cow") * cows <= number(v, "land_area")
    prob += number(v, "investment_per_dairy_cow") * cows + number(v, "investment_per_chicken") * hens <= number(
        v, "funds_available"
    )
    for s, row in SEASONS.items():
        prob += pulp.lpSum(float(rows[row][c]) * land[c] for c in CROPS) + number(
            v, f"labor_{s}_per_dairy_cow"
        ) * cows + number(v, f"labor_{s}_per_chicken") * hens + external[s] <= number(v, f"labor_{s}")
    return solve(prob)
