"""Item 13: acres of four crops within the farm; corn at least twice wheat; soybeans at least half
sorghum; wheat three times sorghum; maximise profit."""

from pathlib import Path

import pulp

from tcsexam.orspace.refmodel import main, number, parameters, solve

READING = "continuous acres; corn >= 2 wheat, soybeans >= 0.5 sorghum, wheat = 3 sorghum"
CROPS = ("corn", "wheat", "soybeans", "sorghum")


def build(workspace: Path) -> dict:
    v = parameters(workspace)
    x = {c: pulp.LpVariable(c, lowBound=0) for c in CROPS}
    prob = pulp.LpProblem("item13", pulp.LpMaximize)
    prob += pulp.lpSum(number(v, f"profit_per_acre_{c}") * x[c] for c in CROPS)
    prob += pulp.lpSum(x.values()) <= number(v, "total_farm_area")
    prob += x["corn"] >= number(v, "corn_wheat_ratio") * x["wheat"]
    prob += x["soybeans"] >= number(v, "soybeans_sorghum_ratio") * x["sorghum"]
    prob += x["wheat"] == number(v, "wheat_sorghum_ratio") * x["sorghum"]
    return solve(prob)


if __name__ == "__main__":
    main(build)
