"""Item 36: routes of at most the available trucks leave the depot and return to it; every customer
is visited by exactly one truck; a route's demand within the truck capacity; service at a customer
starts within its time window (a truck arriving early waits) and lasts its service duration;
travel time equals the Euclidean distance between coordinates (one distance unit per minute); every
truck is back by the end of the depot's window; minimise the total Euclidean distance travelled.
Arcs that no schedule can use (the earliest departure from i cannot reach j by j's window end) are
left out; times and loads follow the usual big-M (MTZ) constraints."""

import math
import re
from pathlib import Path

import pulp

from tcsexam.orspace.refmodel import main, number, parameters, solve, table

READING = "VRP with hard time windows, waiting allowed, travel minutes = Euclidean distance, unrounded distances"


def depot_coordinates(workspace: Path) -> tuple[float, float]:
    """The depot's `(x,y)`: general_parameters.csv writes it unquoted, so its comma splits the
    Value cell in two (`(40` and `50)`); read the pair from the row's text."""
    text = (Path(workspace) / "data" / "general_parameters.csv").read_text(encoding="utf-8-sig")
    found = re.search(r"^depot_coordinates,\s*\(\s*([-\d.]+)\s*,\s*([-\d.]+)\s*\)", text, re.MULTILINE)
    if not found:
        raise ValueError("general_parameters.csv: no depot_coordinates row of the form (x,y)")
    return float(found[1]), float(found[2])


def build(workspace: Path) -> dict:
    v = parameters(workspace)
    depot = depot_coordinates(workspace)
    rows = table(workspace, "table_1")
    nodes = [0] + [int(r["Customer_ID"]) for r in rows]
    xy = {0: depot} | {int(r["Customer_ID"]): (float(r["Coordinates_X"]), float(r["Coordinates_Y"])) for r in rows}
    demand = {0: 0.0} | {int(r["Customer_ID"]): float(r["Demand"]) for r in rows}
    service = {0: 0.0} | {int(r["Customer_ID"]): float(r["Service_Duration"]) for r in rows}
    early = {0: number(v, "depot_time_window_start")} | {
        int(r["Customer_ID"]): float(r["Time_Window_Start"]) for r in rows
    }
    late = {0: number(v, "depot_time_window_end")} | {int(r["Customer_ID"]): float(r["Time_Window_End"]) for r in rows}
    dist = {(i, j): math.dist(xy[i], xy[j]) for i in nodes for j in nodes if i != j}
    arcs = [(i, j) for (i, j) in dist if early[i] + service[i] + dist[i, j] <= late[j]]
    cap = number(v, "truck_capacity")
    x = {a: pulp.LpVariable(f"x_{a[0]}_{a[1]}", cat="Binary") for a in arcs}
    start = {i: pulp.LpVariable(f"t_{i}", lowBound=early[i], upBound=late[i]) for i in nodes if i}
    load = {i: pulp.LpVariable(f"u_{i}", lowBound=demand[i], upBound=cap) for i in nodes if i}
    prob = pulp.LpProblem("item36", pulp.LpMinimize)
    prob += pulp.lpSum(dist[a] * x[a] for a in arcs)
    for i in nodes[1:]:
        prob += pulp.lpSum(x[a] for a in arcs if a[1] == i) == 1
        prob += pulp.lpSum(x[a] for a in arcs if a[0] == i) == 1
    prob += pulp.lpSum(x[a] for a in arcs if a[0] == 0) <= number(v, "max_trucks")
    horizon = late[0]
    for i, j in arcs:
        if j == 0:
            prob += start[i] + service[i] + dist[i, j] <= late[0] + horizon * (1 - x[i, j])
            continue
        depart = start[i] + service[i] if i else early[0]
        big = late[i] + service[i] + dist[i, j] - early[j] if i else early[0] + dist[i, j]
        prob += start[j] >= depart + dist[i, j] - big * (1 - x[i, j])
        if i:
            prob += load[j] >= load[i] + demand[j] - cap * (1 - x[i, j])
    return solve(prob, time_limit_s=240.0)


if __name__ == "__main__":
    main(build)
