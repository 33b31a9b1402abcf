"""Item 24: whole trips of trucks, vans, motorcycles and electric vehicles carry every product unit
(capacity per trip); total pollution within the maximum; at least the minimum truck trips; minimise
total pollution. The text says some vehicle combinations cannot be used together but neither it nor
the data name them, so no exclusion is modelled."""

from pathlib import Path

import pulp

from tcsexam.orspace.refmodel import main, number, parameters, solve

READING = "whole trips; every unit carried; pollution cap; truck minimum; the unnamed vehicle exclusions not modelled"
VEHICLES = ("truck", "van", "motorcycle", "electric_vehicle")


def build(workspace: Path) -> dict:
    v = parameters(workspace)
    trips = {k: pulp.LpVariable(k, lowBound=0, cat="Integer") for k in VEHICLES}
    pollution = pulp.lpSum(number(v, f"{k}_pollution") * trips[k] for k in VEHICLES)
    prob = pulp.LpProblem("item24", pulp.LpMinimize)
    prob += pollution
    prob += pulp.lpSum(number(v, f"{k}_capacity") * trips[k] for k in VEHICLES) >= number(v, "product_units")
    prob += pollution <= number(v, "max_total_pollution")
    prob += trips["truck"] >= number(v, "min_truck_trips")
    return solve(prob)


if __name__ == "__main__":
    main(build)
