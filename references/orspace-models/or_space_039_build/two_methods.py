"""Item 39: whole trips by motorcycle, small truck and large truck; at most two of the three methods
used; motorcycle trips within the road limit; at least the transport requirement carried; total
trips within the maximum; minimise total pollution."""

from pathlib import Path

import pulp

from tcsexam.orspace.refmodel import main, number, parameters, solve

READING = "whole trips, at most two methods used, motorcycle and total trip limits, requirement carried"
METHODS = ("motorcycle", "small_truck", "large_truck")


def build(workspace: Path) -> dict:
    v = parameters(workspace)
    most = number(v, "max_total_trips")
    trips = {m: pulp.LpVariable(m, lowBound=0, cat="Integer") for m in METHODS}
    used = {m: pulp.LpVariable(f"use_{m}", cat="Binary") for m in METHODS}
    prob = pulp.LpProblem("item39", pulp.LpMinimize)
    prob += pulp.lpSum(number(v, f"{m}_pollution") * trips[m] for m in METHODS)
    for m in METHODS:
        prob += trips[m] <= most * used[m]
    prob += pulp.lpSum(used.values()) <= 2
    prob += trips["motorcycle"] <= number(v, "max_motorcycle_trips")
    prob += pulp.lpSum(number(v, f"{m}_capacity") * trips[m] for m in METHODS) >= number(v, "min_transport_requirement")
    prob += pulp.lpSum(trips.values()) <= most
    return solve(prob)


if __name__ == "__main__":
    main(build)
