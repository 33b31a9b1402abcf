"""Item 31's model, shared by its readings. `table_1` gives the hours a unit of each product takes
on each machine, each machine's effective hours and processing cost per machine hour, and in two
more rows each product's raw material cost and unit price; general_parameters names the machines
each product may use at stages A and B. Every product passes both stages on an allowed machine;
machine hours within the effective hours; maximise sales minus raw material minus the processing
cost of the hours used."""

from pathlib import Path

from tcsexam.orspace.refmodel import parameters, routed_production, table

PRODUCTS = ("I", "II", "III")


def build(workspace: Path, integer: bool) -> dict:
    v = parameters(workspace)
    rows = {r["Equipment"]: r for r in table(workspace, "table_1")}
    machines = [m for m in rows if m[0] in "AB" and m[1:].isdigit()]
    allowed = {(p, m) for p in PRODUCTS for s in "AB" for m in v[f"product_{p}_stage_{s}_equipment"].split(" or ")}
    hours = {(p, m): float(rows[m][f"Product_{p}"]) for p, m in sorted(allowed)}
    capacity = {m: float(rows[m]["Effective_Machine_Hours"]) for m in machines}
    rate = {m: float(rows[m]["Processing_Cost_per_Machine_Hour"]) for m in machines}
    stages = {s: [m for m in machines if m.startswith(s)] for s in "AB"}
    margin = {
        p: float(rows["Unit_Price"][f"Product_{p}"]) - float(rows["Raw_Material_Cost"][f"Product_{p}"])
        for p in PRODUCTS
    }
    return routed_production(hours, stages, capacity, rate, margin, integer)
